import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { CrashScenario, withDataDirDb } from '../helpers/crash-scenario.js';
import type { ServeProcess } from '../helpers/serve-process.js';
import type { CrashPoint } from '../../src/faults.js';
import { sqlitePassOnly } from '../helpers/passes.js';

// An adaptive_video package is many blobs under one file row: a worker killed between writing
// them and committing the row, or between deleting the row and the blobs, must leave no segment
// behind once the next process has swept the blob journal (the journal names the package by
// `<file key>.pkg`, see services/media/blob-journal.ts).

// Its servers run on their data directory's SQLite database in either pass.
const skip = sqlitePassOnly('the crash servers run on SQLite in either pass');

let origin: Origin;
before(async () => {
  if (!skip) origin = await startOrigin();
});
after(() => (skip ? undefined : origin.close()));

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
  const all = await withDataDirDb(dataDir, (db) => db.selectFrom('files').select(['blob_key', 'status']).execute());
  const rows = new Set(all.map((r) => r.blob_key));
  const owner = (k: string) => (k.includes('.pkg/') ? k.slice(0, k.indexOf('.pkg/')) : k);
  return {
    orphans: blobs.filter((k) => !rows.has(owner(k))),
    missing: [...rows].filter((k) => !blobs.includes(k)),
    packages: new Set(blobs.filter((k) => k.includes('.pkg/')).map(owner)).size,
    processing: all.filter((r) => r.status === 'processing').length,
  };
}

/** A data directory with a key, served with the loopback origin allowed. */
const newScenario = () =>
  CrashScenario.start('mediad-adaptive-crash-', () => ({ MEDIAD_ALLOWED_URL_HOSTS: origin.host }));

async function untilDone(s: ServeProcess, key: string, id: string) {
  for (let i = 0; i < 600; i++) {
    const task = (await s.call('GET', `/tasks/${id}`, { key })).json.data;
    if (['completed', 'failed'].includes(task.status)) return task;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`task ${id} did not end`);
}

const TASK = { kind: 'adaptive_video', segment_seconds: 1, ladder: [{ height: 240 }, { height: 144 }] };

/** Uploads a fixture with a first process, then starts its adaptive_video task in a process killed at `point`; the task's id. */
async function crashWhileMaking(sc: CrashScenario, fixture: string, point: CrashPoint): Promise<string> {
  const first = await sc.serve();
  const input = await first.call('POST', '/files', { key: sc.key, body: { url: origin.url(fixture) } });
  assert.equal(input.status, 201, input.text);
  await first.stop();
  let taskId = '';
  await sc.crash(
    point,
    async (s) => {
      const res = await s.call('POST', '/tasks', { key: sc.key, body: { ...TASK, file_id: input.json.data.id } });
      taskId = res.json.data.id;
    },
    60_000,
  );
  return taskId;
}

/** After the next process finished the task: exactly its one package, every blob with its row, an empty journal. */
async function assertSettled(sc: CrashScenario): Promise<void> {
  const m = await mismatch(sc.dataDir);
  assert.deepEqual(m.orphans, [], 'no blob without a row');
  assert.deepEqual(m.missing, []);
  assert.equal(m.packages, 1, 'exactly the package of the one output');
  assert.equal(m.processing, 0);
  const journal = await withDataDirDb(sc.dataDir, (db) => db.selectFrom('blob_journal').selectAll().execute());
  assert.deepEqual(journal, []);
}

describe('a killed worker leaves no package blob behind', { skip }, () => {
  it('killed after the segments are written, before the row commits: swept, and the task completes once', async () => {
    const sc = await newScenario();
    try {
      const taskId = await crashWhileMaking(sc, '/fixtures/video-mp4', 'blob.put.written');
      const left = await mismatch(sc.dataDir);
      assert.equal(left.packages, 1, 'the crash came after the package was written');
      // Its entries are referenced by no row yet, or by the row that made it playable early (processing).
      assert.ok(left.orphans.length > 5 || left.processing === 1, JSON.stringify(left));
      const s = await sc.serve();
      const task = await untilDone(s, sc.key, taskId);
      assert.equal(task.status, 'completed', JSON.stringify(task.error));
      await assertSettled(sc);
      await s.stop();
    } finally {
      await sc.remove();
    }
  });

  it('killed while its package plays (row processing): the row and its segments are swept, the retry starts clean', async () => {
    const sc = await newScenario();
    try {
      const taskId = await crashWhileMaking(sc, '/fixtures/video-1080p-10s', 'package.playable');
      const left = await mismatch(sc.dataDir);
      assert.equal(left.processing, 1, 'the crash came after the package became playable');
      assert.equal(left.packages, 1);
      const s = await sc.serve();
      const task = await untilDone(s, sc.key, taskId);
      assert.equal(task.status, 'completed', JSON.stringify(task.error));
      assert.ok(task.attempts >= 2);
      await assertSettled(sc); // no segment of the first attempt is left
      await s.stop();
    } finally {
      await sc.remove();
    }
  });

  it('killed after the row is deleted, before the package is: swept at the next start', async () => {
    const sc = await newScenario();
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
      await sc.crash(
        'blob.delete.committed',
        (s) => s.call('DELETE', `/files/${task.output.id}`, { key: sc.key }),
        60_000,
      );
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
