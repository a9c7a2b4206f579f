import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { migrate, openDatabase, type Db } from '../../src/db/connect.js';
import { systemClock } from '../../src/deps.js';
import type { CrashPoint } from '../../src/faults.js';
import { createKey } from '../../src/services/people/keys.js';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js';

// An adaptive_video package is many blobs under one file row: a worker killed between writing
// them and committing the row, or between deleting the row and the blobs, must leave no segment
// behind once the next process has swept the blob journal (the journal names the package by
// `<file key>.pkg`, see services/media/blob-journal.ts).

let origin: Origin;
before(async () => {
  origin = await startOrigin();
});
after(() => origin.close());

async function withDb<T>(dataDir: string, fn: (db: Db) => Promise<T>): Promise<T> {
  const database = openDatabase({ dialect: 'sqlite', file: path.join(dataDir, 'mediad.db') });
  try {
    await migrate(database.db);
    return await fn(database.db);
  } finally {
    await database.close();
  }
}

async function blobKeys(dataDir: string): Promise<string[]> {
  const root = path.join(dataDir, 'blobs');
  const entries = await fs
    .readdir(path.join(root, 'projects'), { recursive: true, withFileTypes: true })
    .catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

/** Blobs no row references (a package entry is referenced through its file's key), and rows without their blob. */
async function mismatch(dataDir: string) {
  const blobs = await blobKeys(dataDir);
  const rows = new Set(
    await withDb(dataDir, async (db) =>
      (await db.selectFrom('files').select('blob_key').execute()).map((r) => r.blob_key),
    ),
  );
  const owner = (k: string) => (k.includes('.pkg/') ? k.slice(0, k.indexOf('.pkg/')) : k);
  return {
    orphans: blobs.filter((k) => !rows.has(owner(k))),
    missing: [...rows].filter((k) => !blobs.includes(k)),
    packages: new Set(blobs.filter((k) => k.includes('.pkg/')).map(owner)).size,
  };
}

class Scenario {
  key = '';
  private readonly servers: ServeProcess[] = [];
  constructor(readonly dataDir: string) {}

  static async create(): Promise<Scenario> {
    const s = new Scenario(await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-adaptive-crash-')));
    s.key = (await withDb(s.dataDir, (db) => createKey({ db, clock: systemClock }, 'crash', 'main'))).key;
    return s;
  }

  async serve(crashAt?: CrashPoint): Promise<ServeProcess> {
    const s = await spawnServe(this.dataDir, {
      MEDIAD_ALLOWED_URL_HOSTS: origin.host,
      ...(crashAt ? { MEDIAD_CRASH_AT: crashAt } : {}),
    });
    this.servers.push(s);
    return s;
  }

  async crash(point: CrashPoint, act: (s: ServeProcess) => Promise<unknown>): Promise<void> {
    const s = await this.serve(point);
    await act(s).catch(() => undefined);
    assert.equal(
      // unref: a pending timer would hold the test process open for its whole minute.
      await Promise.race([s.exited, new Promise((r) => setTimeout(() => r('alive'), 60_000).unref())]),
      'SIGKILL',
      `the server died at ${point}`,
    );
    await s.stop();
  }

  async remove(): Promise<void> {
    for (const s of this.servers) await s.stop();
    await fs.rm(this.dataDir, { recursive: true, force: true });
  }
}

async function untilDone(s: ServeProcess, key: string, id: string) {
  for (let i = 0; i < 600; i++) {
    const task = (await s.call('GET', `/tasks/${id}`, { key })).json.data;
    if (['completed', 'failed'].includes(task.status)) return task;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`task ${id} did not end`);
}

const TASK = { kind: 'adaptive_video', segment_seconds: 1, ladder: [{ height: 240 }, { height: 144 }] };

describe('a killed worker leaves no package blob behind', () => {
  it('killed after the segments are written, before the row commits: swept, and the task completes once', async () => {
    const sc = await Scenario.create();
    try {
      const first = await sc.serve();
      const input = await first.call('POST', '/files', {
        key: sc.key,
        body: { url: origin.url('/fixtures/video-mp4') },
      });
      assert.equal(input.status, 201, input.text);
      await first.stop();
      let taskId = '';
      await sc.crash('blob.put.written', async (s) => {
        const res = await s.call('POST', '/tasks', { key: sc.key, body: { ...TASK, file_id: input.json.data.id } });
        taskId = res.json.data.id;
      });
      const left = await mismatch(sc.dataDir);
      assert.equal(left.packages, 1, 'the crash came after the package was written');
      assert.ok(left.orphans.length > 5, 'its entries are not referenced yet');
      const s = await sc.serve();
      const task = await untilDone(s, sc.key, taskId);
      assert.equal(task.status, 'completed', JSON.stringify(task.error));
      const m = await mismatch(sc.dataDir);
      assert.deepEqual(m.orphans, [], 'no blob without a row');
      assert.deepEqual(m.missing, []);
      assert.equal(m.packages, 1, 'exactly the package of the one output');
      const journal = await withDb(sc.dataDir, (db) => db.selectFrom('blob_journal').selectAll().execute());
      assert.deepEqual(journal, []);
      await s.stop();
    } finally {
      await sc.remove();
    }
  });

  it('killed after the row is deleted, before the package is: swept at the next start', async () => {
    const sc = await Scenario.create();
    try {
      const first = await sc.serve();
      const input = await first.call('POST', '/files', {
        key: sc.key,
        body: { url: origin.url('/fixtures/video-mp4') },
      });
      const created = await first.call('POST', '/tasks', {
        key: sc.key,
        body: { ...TASK, file_id: input.json.data.id },
      });
      const task = await untilDone(first, sc.key, created.json.data.id);
      assert.equal(task.status, 'completed', JSON.stringify(task.error));
      await first.stop();
      assert.equal((await mismatch(sc.dataDir)).packages, 1);
      await sc.crash('blob.delete.committed', (s) => s.call('DELETE', `/files/${task.output.id}`, { key: sc.key }));
      const s = await sc.serve();
      const m = await mismatch(sc.dataDir);
      assert.deepEqual(m.orphans, []);
      assert.equal(m.packages, 0);
      assert.equal((await s.call('GET', `/files/${task.output.id}`, { key: sc.key })).status, 404);
      await s.stop();
    } finally {
      await sc.remove();
    }
  });
});
