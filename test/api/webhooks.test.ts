import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startReceiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';

let t: TestServer;
let origin: Origin;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let statuses: number[] = [];

before(async () => {
  origin = await startOrigin();
  // The receiver answers from a script: each test sets the statuses it needs.
  receiver = await startReceiver((n) => ({ status: statuses[n - 1] ?? 200 }));
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: `${origin.host},${receiver.host}` });
});
after(async () => {
  await t.stop();
  await receiver.close();
  await origin.close();
});

/** The task's delivery once its outcome is recorded (the receiver sees the request before the row is updated). */
async function attempts(taskId: string) {
  const db = t.server.runtime.deps.db;
  let delivery = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('task_id', '=', taskId)
    .executeTakeFirstOrThrow();
  for (let i = 0; i < 100 && delivery.status === 'pending'; i++) {
    await new Promise((r) => setTimeout(r, 20));
    delivery = await db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('task_id', '=', taskId)
      .executeTakeFirstOrThrow();
  }
  const rows = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', '=', delivery.id)
    .orderBy('attempt')
    .execute();
  return { delivery, rows };
}

describe('task webhook_url', () => {
  it('POSTs the finished task, signed per Standard Webhooks with the project secret', async () => {
    statuses = [];
    receiver.received.length = 0;
    const { key } = await t.key('hooks', 'signed');
    const secret = (await t.call('GET', '/project/webhook-secret', { key })).json.data.secret;
    assert.match(secret, /^whsec_/);
    const task = (
      await t.call('POST', '/tasks', {
        key,
        body: { kind: 'ingest', url: origin.url('/fixtures/image-png'), webhook_url: receiver.url() },
      })
    ).json.data;
    const [hit] = await receiver.waitFor(1);
    const payload = new Webhook(secret).verify(hit!.body, hit!.headers as Record<string, string>) as any;
    assert.equal(payload.id, task.id);
    assert.equal(payload.status, 'completed');
    assert.equal(payload.output.kind, 'image');
    assert.throws(() =>
      new Webhook(`whsec_${Buffer.from('wrong secret bytes here!').toString('base64')}`).verify(
        hit!.body,
        hit!.headers as Record<string, string>,
      ),
    );
    const { delivery, rows } = await attempts(task.id);
    assert.equal(delivery.status, 'delivered');
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.status_code, 200);
  });

  it('reports failed tasks too, and retries a 500 with the same webhook-id', async () => {
    statuses = [500, 200];
    receiver.received.length = 0;
    const { key } = await t.key('hooks', 'retry');
    const task = (
      await t.call('POST', '/tasks', {
        key,
        body: { kind: 'ingest', url: origin.url('/fixtures/random-bytes'), webhook_url: receiver.url() },
      })
    ).json.data;
    const hits = await receiver.waitFor(2, 20_000);
    assert.equal(hits[0]!.headers['webhook-id'], hits[1]!.headers['webhook-id']);
    assert.ok(hits[1]!.at - hits[0]!.at >= 4000, 'the second attempt follows the schedule (about 5 s)');
    assert.equal(JSON.parse(hits[1]!.body).status, 'failed');
    const { delivery, rows } = await attempts(task.id);
    assert.equal(delivery.status, 'delivered');
    assert.deepEqual(
      rows.map((r) => r.status_code),
      [500, 200],
    );
  });

  it('stops at 410 Gone', async () => {
    statuses = [410];
    receiver.received.length = 0;
    const { key } = await t.key('hooks', 'gone');
    const task = (
      await t.call('POST', '/tasks', {
        key,
        body: { kind: 'ingest', url: origin.url('/fixtures/image-png'), webhook_url: receiver.url() },
      })
    ).json.data;
    await receiver.waitFor(1);
    await waitForTask(t, key, task.id);
    await new Promise((r) => setTimeout(r, 200));
    const { delivery } = await attempts(task.id);
    assert.equal(delivery.status, 'failed');
  });

  it('signs with both secrets for a day after a rotation', async () => {
    statuses = [];
    receiver.received.length = 0;
    const { key } = await t.key('hooks', 'rotate');
    const old = (await t.call('GET', '/project/webhook-secret', { key })).json.data.secret;
    const rotated = (await t.call('POST', '/project/webhook-secret/rotate', { key })).json.data;
    assert.notEqual(rotated.secret, old);
    assert.ok(rotated.previous_secret_expires > new Date().toISOString());
    await t.call('POST', '/tasks', {
      key,
      body: { kind: 'ingest', url: origin.url('/fixtures/image-png'), webhook_url: receiver.url() },
    });
    const [hit] = await receiver.waitFor(1);
    assert.equal(String(hit!.headers['webhook-signature']).split(' ').length, 2);
    for (const s of [old, rotated.secret]) new Webhook(s).verify(hit!.body, hit!.headers as Record<string, string>);
  });

  it('refuses a webhook_url that is not a URL', async () => {
    const { key } = await t.key('hooks', 'bad');
    const res = await t.call('POST', '/tasks', {
      key,
      body: { kind: 'ingest', url: origin.url('/fixtures/image-png'), webhook_url: 'nope' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.json.error.details[0].field, 'webhook_url');
  });
});
