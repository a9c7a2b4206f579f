import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bumpCounter } from '../../src/db/queries/counters.js';
import { transact } from '../../src/db/transact.js';
import { claim, complete, LeaseLostError } from '../../src/queue/task-state.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// A task's completion is held to its transaction's last writes, gated by its lease (db/transact.ts,
// queue/task-state.ts): the completed row is made from the claimed one without reading it back, so
// it must equal what the database holds; and a task no longer ours changes nothing, not even the
// transaction's other writes (on PostgreSQL they are then one statement sent without BEGIN, which
// fails as a whole). Both databases.

let t: TestServer;
let key: string;
let projectId: string;
before(async () => {
  t = await startTestServer({ MEDIAD_WORKER_CONCURRENCY: '0' });
  ({ key, project_id: projectId } = await t.key('held', 'completion'));
});
after(async () => {
  await t.stop();
});

async function claimedTask() {
  const created = await t.call('POST', '/tasks', {
    key,
    body: { kind: 'http', url: 'https://example.invalid/', webhook_url: 'https://example.invalid/hook' },
  });
  assert.equal(created.status, 201, created.text);
  const claimed = await claim(t.server.runtime.deps.db, 'test-worker', 30_000, new Date());
  assert.ok(claimed);
  assert.equal(claimed.task.id, created.json.data.id);
  return claimed.task;
}

const counter = async () =>
  (
    await t.server.runtime.deps.db
      .selectFrom('counters')
      .select('count')
      .where('project_id', '=', projectId)
      .where('resource', '=', 'media')
      .executeTakeFirst()
  )?.count ?? 0;

describe('a task’s completion with the last writes', () => {
  it('makes the row the database holds, and commits it with the other writes', async () => {
    const { db } = t.server.runtime.deps;
    const task = await claimedTask();
    const before = await counter();
    const now = new Date().toISOString();
    const row = await transact(db, async (trx) => {
      await bumpCounter(trx, projectId, 'media', 1);
      return complete(trx, task, { outputFileId: null, output: { status: 200 }, results: { ok: true } }, now, task);
    });
    const stored = await db.selectFrom('tasks').selectAll().where('id', '=', task.id).executeTakeFirstOrThrow();
    assert.deepEqual(row, stored);
    assert.equal(stored.status, 'completed');
    assert.equal(await counter(), before + 1);
    // Its event and its webhook delivery carry that row.
    const event = await db
      .selectFrom('events')
      .select('data')
      .where('type', '=', 'task.completed')
      .where('data', 'like', `%${task.id}%`)
      .executeTakeFirstOrThrow();
    assert.equal(JSON.parse(event.data).status, 'completed');
    const delivery = await db
      .selectFrom('webhook_deliveries')
      .select('payload')
      .where('task_id', '=', task.id)
      .executeTakeFirstOrThrow();
    assert.equal(JSON.parse(delivery.payload).output.status, 200);
  });

  it('of a task no longer ours: LeaseLostError, and none of the transaction’s writes', async () => {
    const { db } = t.server.runtime.deps;
    const task = await claimedTask();
    const cancelled = await t.call('POST', `/tasks/${task.id}/cancel`, { key });
    assert.equal(cancelled.status, 200, cancelled.text);
    const before = await counter();
    const events = await db.selectFrom('events').select('id').where('data', 'like', `%${task.id}%`).execute();
    await assert.rejects(
      transact(db, async (trx) => {
        await bumpCounter(trx, projectId, 'media', 1);
        return complete(trx, task, { outputFileId: null, output: { status: 200 } }, new Date().toISOString(), task);
      }),
      LeaseLostError,
    );
    assert.equal(await counter(), before, 'the counter’s write went with it');
    const row = await db.selectFrom('tasks').select('status').where('id', '=', task.id).executeTakeFirstOrThrow();
    assert.equal(row.status, 'cancelled');
    const after = await db.selectFrom('events').select('id').where('data', 'like', `%${task.id}%`).execute();
    assert.equal(after.length, events.length, 'no task.completed event');
  });
});
