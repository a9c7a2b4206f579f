// Shared rows (a project's counters and usage) and the outbox's events written at the end of a
// transact transaction (db/transact.ts): merged, rolled back with it, and on PostgreSQL not locked
// while the rest of the transaction runs; and the wake-ups fired after its commit. With MEDIAD_TEST_DATABASE_URL on a fresh PostgreSQL database, else SQLite.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Db } from '../../src/db/connect.js';
import { bumpCounter } from '../../src/db/queries/counters.js';
import { addUsage } from '../../src/db/queries/usage.js';
import { transact, wake } from '../../src/db/transact.js';
import { recordEvent } from '../../src/events/record.js';
import { EVENTS_READY, signals, TASK_READY, WEBHOOK_READY } from '../../src/signals.js';
import { unitDatabase } from '../helpers/server.js';

let db: Db;
let close: () => Promise<void>;
before(async () => ({ db, close } = await unitDatabase('mediad-last-writes-')));
after(() => close());

const count = async (projectId: string) =>
  Number(
    (
      await db
        .selectFrom('counters')
        .select('count')
        .where('project_id', '=', projectId)
        .where('resource', '=', 'files')
        .executeTakeFirst()
    )?.count ?? 0,
  );
const usage = async (projectId: string) =>
  (
    await db.selectFrom('usage_counters').selectAll().where('project_id', '=', projectId).orderBy('period').execute()
  ).map((r) => [r.period, r.metric, Number(r.value)]);

test('deltas of one transaction are merged into one write at its end; outside a transaction they write at once', async () => {
  const at = '2026-11-29T07:00:00.000Z';
  await transact(db, async (trx) => {
    await bumpCounter(trx, 'p1', 'files', 1);
    await addUsage(trx, [{ projectId: 'p1', at, metric: 'tasks:completed', delta: 1 }]);
    await bumpCounter(trx, 'p1', 'files', 2);
    await addUsage(trx, [{ projectId: 'p1', at, metric: 'tasks:completed', delta: 4 }]);
    // Held back: not written yet inside the transaction.
    const inside = await trx.selectFrom('counters').select('count').where('project_id', '=', 'p1').executeTakeFirst();
    assert.equal(inside, undefined);
  });
  assert.equal(await count('p1'), 3);
  assert.deepEqual(await usage('p1'), [
    ['d', 'tasks:completed', 5],
    ['h', 'tasks:completed', 5],
  ]);
  await bumpCounter(db, 'p1', 'files', 1);
  assert.equal(await count('p1'), 4);
});

test('a transaction that fails writes none of its held-back rows', async () => {
  await assert.rejects(
    transact(db, async (trx) => {
      await bumpCounter(trx, 'p2', 'files', 1);
      await addUsage(trx, [{ projectId: 'p2', at: '2026-11-29T07:00:00.000Z', metric: 'tasks:failed', delta: 1 }]);
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(await count('p2'), 0);
  assert.deepEqual(await usage('p2'), []);
});

test(
  'on PostgreSQL a transaction does not hold the shared row while it runs',
  { skip: !process.env.MEDIAD_TEST_DATABASE_URL },
  async () => {
    await bumpCounter(db, 'p3', 'files', 1); // the row exists: an upsert of it would wait for its lock
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = transact(db, async (trx) => {
      await bumpCounter(trx, 'p3', 'files', 1);
      await gate; // still running: its other statements, round trips of another process
    });
    await new Promise((r) => setTimeout(r, 100));
    // Written early, the first transaction's lock would keep this one waiting until it ends.
    const second = transact(db, (trx) => bumpCounter(trx, 'p3', 'files', 1));
    const outcome = await Promise.race([
      second.then(() => 'committed'),
      new Promise((r) => setTimeout(() => r('blocked'), 3000)),
    ]);
    release();
    await Promise.all([first, second]);
    assert.equal(outcome, 'committed');
    assert.equal(await count('p3'), 3);
  },
);

test('events recorded in a transaction are inserted at its end in the order recorded, and not at all when it fails', async () => {
  const at = '2026-11-29T07:00:00.000Z';
  const ids = await transact(db, async (trx) => {
    const recorded = [];
    for (const type of ['file.created', 'media.created', 'task.completed'] as const)
      recorded.push(await recordEvent(trx, 'p4', type, { n: recorded.length }, at));
    // Held back with the shared rows: not in the outbox yet inside the transaction.
    assert.deepEqual(await trx.selectFrom('events').select('id').where('project_id', '=', 'p4').execute(), []);
    return recorded;
  });
  const rows = await db
    .selectFrom('events')
    .select(['id', 'type', 'data'])
    .where('project_id', '=', 'p4')
    .orderBy('seq')
    .execute();
  assert.deepEqual(
    rows.map((r) => [r.id, r.type, JSON.parse(r.data)]),
    [
      [ids[0], 'file.created', { n: 0 }],
      [ids[1], 'media.created', { n: 1 }],
      [ids[2], 'task.completed', { n: 2 }],
    ],
  );
  await assert.rejects(
    transact(db, async (trx) => {
      await recordEvent(trx, 'p5', 'file.created', {}, at);
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.deepEqual(await db.selectFrom('events').select('id').where('project_id', '=', 'p5').execute(), []);
});

test('after a commit the task workers wake at once; the event and webhook loops on the next turn', async () => {
  // A claim then does not queue behind the event dispatch's transaction on the one SQLite
  // connection (bench:tasks measured 1.4–5.5 ms between a task's commit and its claim).
  await new Promise((r) => setImmediate(r)); // the earlier tests' wake-ups, fired and gone
  const heard: string[] = [];
  const listeners = [TASK_READY, EVENTS_READY, WEBHOOK_READY].map((s) => [s, () => heard.push(s)] as const);
  for (const [s, l] of listeners) signals.on(s, l);
  try {
    await transact(db, async (trx) => {
      await wake(trx, EVENTS_READY);
      await wake(trx, WEBHOOK_READY);
      await wake(trx, TASK_READY);
      assert.deepEqual(heard, []); // nothing before the commit
    });
    assert.deepEqual(heard, [TASK_READY]);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(heard.sort(), [EVENTS_READY, TASK_READY, WEBHOOK_READY].sort());
  } finally {
    for (const [s, l] of listeners) signals.off(s, l);
  }
});
