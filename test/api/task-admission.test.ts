import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/ids.js';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// What POST /tasks checks at creation instead of failing later (hardening issue, points 9, 10).

let t: TestServer;
let origin: Origin;
let key: string;

before(async () => {
  origin = await startOrigin();
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host, MEDIAD_WORKER_CONCURRENCY: '0' });
  ({ key } = await t.key('admission', 'main'));
});
after(async () => {
  await t.stop();
  await origin.close();
});

describe('task webhook_url', () => {
  it('is refused at creation when it points at a private, loopback or link-local address, as POST /webhooks does', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data',
      'http://10.0.0.8/hook',
      'http://localhost:9/hook',
      'http://[::1]/hook',
      'http://0.0.0.0/hook',
    ]) {
      const before = (await t.call('GET', '/tasks', { key })).json.meta.total;
      const res = await t.call('POST', '/tasks', {
        key,
        body: { kind: 'ingest', url: origin.url('/fixtures/image-png'), webhook_url: url },
      });
      assert.equal(res.status, 400, `${url}: ${res.text}`);
      assert.equal(res.json.error.code, 'validation_failed');
      assert.equal(res.json.error.details[0].field, 'webhook_url');
      const endpoint = await t.call('POST', '/webhooks', { key, body: { url, events: ['*'] } });
      assert.equal(endpoint.status, 400, 'the same rule as webhook endpoints');
      assert.equal((await t.call('GET', '/tasks', { key })).json.meta.total, before, 'nothing created');
    }
    // An allowed origin is accepted.
    const ok = await t.call('POST', '/tasks', {
      key,
      body: { kind: 'ingest', url: origin.url('/fixtures/image-png'), webhook_url: origin.url('/hook') },
    });
    assert.equal(ok.status, 201, ok.text);
  });

  it('a delivery the guard refuses fails at once, recorded, instead of being retried for 33 hours', async () => {
    // A delivery to an address that became private after creation (DNS changed), or made before
    // the check existed: the guard classifies the address and refuses without connecting.
    const db = t.server.runtime.deps.db;
    const { project_id } = await t.key('admission', 'main');
    const now = new Date().toISOString();
    const id = newId('delivery');
    await db
      .insertInto('webhook_deliveries')
      .values({
        id,
        project_id,
        task_id: 'task_x',
        url: 'http://10.255.255.1/hook',
        event_type: 'task.completed',
        payload: '{}',
        status: 'pending',
        attempts: 0,
        next_attempt: now,
        lease_expires: null,
        created: now,
        updated: now,
        endpoint_id: null,
        event_id: null,
      })
      .execute();
    const { signals, WEBHOOK_READY } = await import('../../src/signals.js');
    signals.emit(WEBHOOK_READY);
    let row;
    for (let i = 0; i < 100; i++) {
      row = await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      if (row.status !== 'pending') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(row!.status, 'failed');
    assert.equal(row!.attempts, 1);
    const attempts = await db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', id).execute();
    assert.equal(attempts.length, 1);
    assert.match(attempts[0]!.error ?? '', /private|refus/i);
  });
});

describe('ingest media_id', () => {
  it('is 404 at creation when the media is another project’s or missing, as POST /files answers', async () => {
    const other = await t.key('admission', 'other');
    const media = await t.call('POST', '/media', { key: other.key, body: { title: 'theirs' } });
    assert.equal(media.status, 201);
    for (const mediaId of [media.json.data.id, 'med_doesnotexist0000']) {
      const res = await t.call('POST', '/tasks', {
        key,
        body: { kind: 'ingest', url: origin.url('/fixtures/image-png'), media_id: mediaId },
      });
      assert.equal(res.status, 404, res.text);
      assert.equal(res.json.error.code, 'not_found');
      assert.equal(res.json.error.details[0].field, 'media_id');
      const files = await t.call('POST', '/files', {
        key,
        body: { url: origin.url('/fixtures/image-png'), media_id: mediaId },
      });
      assert.equal(files.status, 404);
    }
  });
});
