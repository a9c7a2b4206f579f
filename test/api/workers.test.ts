import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';
import { spawnWorker, stopWorker } from '../helpers/workers.js';
import { freePort } from '../helpers/server.js';
import { request } from 'undici';

let t: TestServer;
let origin: Origin;
const workers: ChildProcess[] = [];

before(async () => {
  origin = await startOrigin();
  // serve runs no workers here: every task is run by separate `mediad worker` processes.
  t = await startTestServer({
    MEDIAD_ALLOWED_URL_HOSTS: origin.host,
    MEDIAD_WORKER_CONCURRENCY: '0',
    MEDIAD_WORKER_LEASE_SECONDS: '2',
  });
});
after(async () => {
  for (const w of workers) await stopWorker(w, 'SIGKILL');
  await t.stop();
  await origin.close();
});

async function countBlobs(dir: string): Promise<number> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter(
    (e) => e.isFile() && !path.join(e.parentPath ?? e.path, e.name).includes(`${path.sep}.tmp${path.sep}`),
  ).length;
}

describe('mediad worker processes', () => {
  it('a worker killed with SIGKILL mid-task loses nothing: another completes the task exactly once', async () => {
    const { key, project_id } = await t.key('workers', 'kill');
    const input = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/video-1080p-10s') } })).json
      .data;
    const task = (
      await t.call('POST', '/tasks', { key, body: { kind: 'video', file_id: input.id, height: 720, preset: 'medium' } })
    ).json.data;

    const first = spawnWorker(t);
    workers.push(first);
    const scratch = path.join(t.dataDir, 'tmp', String(first.pid));
    const ffmpegOf = (dir: string) =>
      execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes('ffmpeg') && l.includes(dir));
    const deadline = Date.now() + 30_000;
    while (ffmpegOf(scratch).length === 0) {
      assert.ok(Date.now() < deadline, 'the first worker started FFmpeg');
      await new Promise((r) => setTimeout(r, 50));
    }
    await stopWorker(first, 'SIGKILL');
    assert.equal(
      (await t.call('GET', `/tasks/${task.id}`, { key })).json.data.status,
      'processing',
      'the row still says processing: nobody told it',
    );

    const second = spawnWorker(t);
    workers.push(second);
    const done = await waitForTask(t, key, task.id, ['completed', 'failed'], 120_000);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal(done.attempts, 2);
    assert.deepEqual(ffmpegOf(scratch), [], 'the orphaned FFmpeg of the killed worker was stopped');
    await assert.rejects(fs.access(scratch), 'the killed worker’s scratch directory was removed');

    const media = (await t.call('GET', `/media/${input.media_id}`, { key })).json.data;
    assert.equal(media.files.length, 2, 'the input and exactly one output');
    const rows = await t.server.runtime.deps.db
      .selectFrom('files')
      .select('id')
      .where('project_id', '=', project_id)
      .execute();
    assert.equal(
      await countBlobs(path.join(t.dataDir, 'blobs', 'projects', project_id)),
      rows.length,
      'no blob without a row',
    );
    await stopWorker(second);
  });

  it('two workers share 20 tasks and run each exactly once', async () => {
    const { key } = await t.key('workers', 'share');
    const input = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-jpeg') } })).json
      .data;
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      ids.push(
        (
          await t.call('POST', '/tasks', {
            key,
            body: { kind: 'image', file_id: input.id, width: 100 + i, format: 'webp' },
          })
        ).json.data.id,
      );
    }
    const pair = [
      spawnWorker(t, { MEDIAD_WORKER_LEASE_SECONDS: '10' }),
      spawnWorker(t, { MEDIAD_WORKER_LEASE_SECONDS: '10' }),
    ];
    workers.push(...pair);
    const done = await Promise.all(ids.map((id) => waitForTask(t, key, id, ['completed', 'failed'], 120_000)));
    for (const d of done) {
      assert.equal(d.status, 'completed', JSON.stringify(d.error));
      assert.equal(d.attempts, 1, 'claimed once');
    }
    assert.equal(new Set(done.map((d) => d.output.id)).size, 20);
    assert.deepEqual(
      done.map((d) => d.output.width).sort((a, b) => a - b),
      ids.map((_, i) => 100 + i),
    );
    const media = (await t.call('GET', `/media/${input.media_id}`, { key })).json.data;
    assert.equal(media.files.length, 21);
    for (const w of pair) await stopWorker(w);
  });

  it('SIGTERM drains: a task that cannot finish in time goes back to the queue and its FFmpeg stops', async () => {
    const { key } = await t.key('workers', 'drain');
    const input = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/video-1080p-10s') } })).json
      .data;
    const task = (
      await t.call('POST', '/tasks', { key, body: { kind: 'video', file_id: input.id, codec: 'h265', preset: 'slow' } })
    ).json.data;
    const worker = spawnWorker(t, { MEDIAD_WORKER_DRAIN_SECONDS: '1' });
    workers.push(worker);
    await waitForTask(t, key, task.id, ['processing'], 30_000);
    const scratch = path.join(t.dataDir, 'tmp', String(worker.pid));
    await stopWorker(worker, 'SIGTERM');
    assert.equal(worker.exitCode, 0);
    const after = (await t.call('GET', `/tasks/${task.id}`, { key })).json.data;
    assert.equal(after.status, 'pending', 'released for another worker');
    assert.equal(after.output, null);
    const ps = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
    assert.ok(!ps.split('\n').some((l) => l.includes('ffmpeg') && l.includes(scratch)), 'its FFmpeg was stopped');
    await t.call('POST', `/tasks/${task.id}/cancel`, { key });
  });

  it('a worker killed during an automation’s workflow: the workflow still completes once', async () => {
    const { key } = await t.key('workers', 'workflow');
    const automation = (
      await t.call('POST', '/automations', {
        key,
        body: {
          trigger: { kind: 'event', event: 'media.created' },
          workflow: [
            { kind: 'video', height: 720, preset: 'medium', ref: 'hd' },
            { kind: 'image', width: 50, ref: 'thumb' },
          ],
        },
      })
    ).json.data;
    const first = spawnWorker(t);
    workers.push(first);
    const input = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/video-1080p-10s') } })).json
      .data;
    const scratch = path.join(t.dataDir, 'tmp', String(first.pid));
    const deadline = Date.now() + 30_000;
    const ffmpegRunning = () =>
      execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
        .split('\n')
        .some((l) => l.includes('ffmpeg') && l.includes(scratch) && l.includes('output.mp4'));
    while (!ffmpegRunning()) {
      assert.ok(Date.now() < deadline, 'the video step started in the first worker');
      await new Promise((r) => setTimeout(r, 50));
    }
    await stopWorker(first, 'SIGKILL');
    workers.push(spawnWorker(t));

    let run: any;
    const until = Date.now() + 120_000;
    for (;;) {
      run = ((await t.call('GET', '/tasks?kind=workflow&limit=10', { key })).json.data as any[]).find(
        (x) => x.automation_id === automation.id,
      );
      if (run && ['completed', 'failed'].includes(run.status)) break;
      assert.ok(Date.now() < until, 'the workflow finished');
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(run.status, 'completed', JSON.stringify(run.error));
    const media = (await t.call('GET', `/media/${input.media_id}`, { key })).json.data;
    assert.deepEqual(
      media.files.map((f: any) => f.ref).sort(),
      ['hd', 'original', 'thumb'],
      'each step’s output exactly once',
    );
    const runs = await t.server.runtime.deps.db
      .selectFrom('automation_runs')
      .selectAll()
      .where('automation_id', '=', automation.id)
      .execute();
    assert.equal(runs.length, 1);
    const steps = await t.server.runtime.deps.db
      .selectFrom('tasks')
      .select(['kind', 'attempts'])
      .where('parent_id', '=', run.id)
      .execute();
    assert.equal(steps.length, 2);
    assert.equal(steps.find((x) => x.kind === 'video')!.attempts, 2, 'the killed step ran again');
  });

  it('a worker serves its own task metrics over HTTPS with MEDIAD_WORKER_METRICS_PORT', async () => {
    const { key } = await t.key('workers', 'metrics');
    for (const w of workers) await stopWorker(w); // the task must run in the worker under test
    const port = await freePort();
    const worker = spawnWorker(t, { MEDIAD_WORKER_METRICS_PORT: String(port), MEDIAD_HOST: '127.0.0.1' });
    workers.push(worker);
    const ready = Date.now() + 30_000;
    for (;;) {
      const up = await request(`https://localhost:${port}/metrics`, { dispatcher: t.agent }).then(
        (r) => r.body.dump().then(() => true),
        () => false,
      );
      if (up) break;
      assert.ok(Date.now() < ready, 'the worker’s metrics port answers');
      await new Promise((r) => setTimeout(r, 100));
    }
    const input = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-png') } })).json.data;
    const task = (await t.call('POST', '/tasks', { key, body: { kind: 'image', file_id: input.id, width: 8 } })).json
      .data;
    assert.equal((await waitForTask(t, key, task.id, ['completed', 'failed'], 60_000)).status, 'completed');
    const res = await request(`https://localhost:${port}/metrics`, { dispatcher: t.agent });
    const text = await res.body.text();
    assert.equal(res.statusCode, 200);
    assert.match(text, /mediad_tasks_total\{kind="image",status="completed"\} [1-9]/);
    await stopWorker(worker);
  });
});
