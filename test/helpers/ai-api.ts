// Helpers of the intelligence API tests: files uploaded by PUT with the project's key (the
// generated AI fixtures live on disk, not at the origin), tasks run to their end, outputs read,
// and a retry brought forward (the kinds back off 10 s and more between attempts).
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { request } from 'undici';
import { signals, TASK_READY } from '../../src/signals.js';
import type { TestServer } from './server.js';
import { waitForTask } from './tasks.js';

export interface Project {
  key: string;
  projectId: string;
}

let uploads = 0;

/** Stores a local file as a new file (and media) of the project, as `PUT /d/<project>/<folder>/<name>` does. */
export async function upload(t: TestServer, p: Project, localPath: string, name?: string): Promise<any> {
  const filename = name ?? `${++uploads}-${localPath.split('/').pop()}`;
  const res = await request(`${t.base}/d/${p.projectId}/in/${filename}`, {
    method: 'PUT',
    body: await fs.readFile(localPath),
    headers: { authorization: `Bearer ${p.key}` },
    dispatcher: t.agent,
  });
  const text = await res.body.text();
  assert.equal(res.statusCode, 201, text);
  return JSON.parse(text).data;
}

/** POST /tasks, which must accept it. */
export async function create(t: TestServer, key: string, body: Record<string, unknown>): Promise<any> {
  const res = await t.call('POST', '/tasks', { key, body });
  assert.equal(res.status, 201, res.text);
  return res.json.data;
}

/** Creates a task and waits for its end. */
export async function run(t: TestServer, key: string, body: Record<string, unknown>, timeoutMs = 120_000) {
  return waitForTask(t, key, (await create(t, key, body)).id, undefined, timeoutMs);
}

/** The bytes of a delivered file as text. */
export async function fetchText(t: TestServer, url: string): Promise<string> {
  const res = await request(url, { dispatcher: t.agent });
  assert.equal(res.statusCode, 200);
  return res.body.text();
}

export async function fetchJson(t: TestServer, url: string): Promise<any> {
  return JSON.parse(await fetchText(t, url));
}

/**
 * Waits until the task is back in the queue after its `attempts`-th failure, returns when that
 * retry was due and the error it recorded, then makes it due now (the backoff was already proven
 * by the due time) and wakes the workers.
 */
export async function bringRetryForward(
  t: TestServer,
  taskId: string,
  attempts: number,
): Promise<{ failedAt: number; dueAt: number; error: { code: string; message: string } }> {
  const { db } = t.server.runtime.deps;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const row = await db.selectFrom('tasks').selectAll().where('id', '=', taskId).executeTakeFirstOrThrow();
    if (row.status === 'pending' && row.attempts >= attempts && row.error) {
      await db.updateTable('tasks').set({ run_after: new Date().toISOString() }).where('id', '=', taskId).execute();
      signals.emit(TASK_READY);
      return { failedAt: Date.parse(row.updated), dueAt: Date.parse(row.run_after), error: JSON.parse(row.error) };
    }
    assert.ok(!['completed', 'failed', 'cancelled'].includes(row.status), `task ended: ${row.status} ${row.error}`);
    assert.ok(Date.now() < deadline, `task ${taskId} did not come back for attempt ${attempts + 1}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
