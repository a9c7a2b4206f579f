import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { claim } from '../../src/queue/task-state.js';
import { findFileRow } from '../../src/services/media/files.js';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';

// A worker's input file: on PostgreSQL the claim's statement reads its row beside the task (one
// round trip fewer), on SQLite the worker reads it after the claim. Either way the row is the one
// the API reads, and a file deleted while its task waited ends the task with not_found. Both databases.

let origin: Origin;
before(async () => {
  origin = await startOrigin();
});
after(async () => {
  await origin.close();
});

describe('a task’s input file', () => {
  it('is read with the claim on PostgreSQL, as the API reads it', async () => {
    const t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host, MEDIAD_WORKER_CONCURRENCY: '0' });
    try {
      const { key, project_id: projectId } = await t.key('input', 'claim');
      const file = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-png') } })).json
        .data;
      const task = (await t.call('POST', '/tasks', { key, body: { kind: 'image', file_id: file.id, width: 8 } })).json
        .data;
      const { db } = t.server.runtime.deps;
      const claimed = await claim(db, 'test-worker', 30_000, new Date());
      assert.ok(claimed);
      assert.equal(claimed.task.id, task.id);
      if (!t.databaseUrl) {
        assert.equal(claimed.inputFile, undefined, 'SQLite: read by the worker after the claim');
        return;
      }
      const row = await findFileRow({ db, reader: null }, projectId, file.id);
      assert.ok(row && claimed.inputFile);
      // Every column with the type the API's read gives it (numbers stay numbers, JSON stays text).
      for (const [column, value] of Object.entries(row))
        assert.deepEqual(claimed.inputFile[column as keyof typeof row], value, column);
      assert.equal(typeof claimed.inputFile.filesize, 'number');
      assert.equal(typeof claimed.inputFile.probe, 'string');
    } finally {
      await t.stop();
    }
  });

  it('fetched from a url: attached to the task, whose completed row and event name that file', async () => {
    const t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host });
    try {
      const { key } = await t.key('input', 'url');
      const created = await t.call('POST', '/tasks', {
        key,
        body: { kind: 'image', url: origin.url('/fixtures/image-png'), width: 8 },
      });
      assert.equal(created.status, 201, created.text);
      const done = await waitForTask(t, key, created.json.data.id);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.match(done.input?.id ?? '', /^file_/, 'the fetched input is recorded on the task');
      const event = await t.server.runtime.deps.db
        .selectFrom('events')
        .select('data')
        .where('type', '=', 'task.completed')
        .where('data', 'like', `%${done.id}%`)
        .executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(event.data).input, done.input, 'the event names that file, not the url');
    } finally {
      await t.stop();
    }
  });

  it('deleted while its task waited: the task fails with not_found when it is claimed', async () => {
    const t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host });
    try {
      const { key } = await t.key('input', 'gone');
      assert.equal((await t.call('POST', '/queue/kinds/image/pause', { key })).status, 200);
      const file = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-png') } })).json
        .data;
      const task = (await t.call('POST', '/tasks', { key, body: { kind: 'image', file_id: file.id, width: 8 } })).json
        .data;
      const deleted = await t.call('DELETE', `/files/${file.id}`, { key });
      assert.equal(deleted.status, 200, deleted.text);
      assert.equal((await t.call('POST', '/queue/kinds/image/resume', { key })).status, 200);
      const failed = await waitForTask(t, key, task.id);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.error_code, 'not_found');
      assert.match(failed.error, new RegExp(`input file ${file.id} no longer exists`));
    } finally {
      await t.stop();
    }
  });
});
