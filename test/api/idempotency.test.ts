import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let origin: Origin;

before(async () => {
  origin = await startOrigin();
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host });
});
after(async () => {
  await t.stop();
  await origin.close();
});

const idem = (k: string) => ({ 'idempotency-key': k });
const uniqueKey = () => `idem-${Math.random().toString(36).slice(2)}-${Date.now()}`.slice(0, 32);

async function count(table: 'files' | 'media', projectId: string): Promise<number> {
  const row = await t.server.runtime.deps.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('project_id', '=', projectId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('Idempotency-Key', () => {
  it('replays the first response for a repeat and creates nothing new', async () => {
    const { key, project_id } = await t.key('idem', 'replay');
    const k = uniqueKey();
    const body = { url: origin.url('/fixtures/image-png'), metadata: { n: 1 } };
    const first = await t.call('POST', '/files', { key, body, headers: idem(k) });
    assert.equal(first.status, 201, first.text);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    // Same JSON with keys in another order is the same request.
    const again = await t.call('POST', '/files', {
      key,
      body: { metadata: { n: 1 }, url: body.url },
      headers: idem(k),
    });
    assert.equal(again.status, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json, first.json);
    assert.equal(await count('files', project_id), 1);
    assert.equal(await count('media', project_id), 1);
  });

  it('answers 422 idempotency_key_reused when the same key comes with another body', async () => {
    const { key } = await t.key('idem', 'reuse');
    const k = uniqueKey();
    assert.equal((await t.call('POST', '/media', { key, body: { title: 'a' }, headers: idem(k) })).status, 201);
    const res = await t.call('POST', '/media', { key, body: { title: 'b' }, headers: idem(k) });
    assert.equal(res.status, 422);
    assert.equal(res.json.error.code, 'idempotency_key_reused');
  });

  it('refuses keys shorter than 16 or longer than 32 characters', async () => {
    const { key } = await t.key('idem', 'format');
    for (const k of ['short', 'x'.repeat(33), 'has space in the key!!']) {
      const res = await t.call('POST', '/media', { key, body: {}, headers: idem(k) });
      assert.equal(res.status, 400, k);
      assert.equal(res.json.error.code, 'idempotency_key_invalid');
    }
    assert.equal((await t.call('POST', '/media', { key, body: {}, headers: idem('x'.repeat(16)) })).status, 201);
    assert.equal((await t.call('POST', '/media', { key, body: {}, headers: idem('y'.repeat(32)) })).status, 201);
  });

  it('scopes keys to the project', async () => {
    const a = await t.key('idem', 'scope-a');
    const b = await t.key('idem', 'scope-b');
    const k = uniqueKey();
    const ra = await t.call('POST', '/media', { key: a.key, body: { title: 'same' }, headers: idem(k) });
    const rb = await t.call('POST', '/media', { key: b.key, body: { title: 'same' }, headers: idem(k) });
    assert.equal(ra.status, 201);
    assert.equal(rb.status, 201);
    assert.equal(rb.headers['idempotent-replayed'], undefined);
    assert.notEqual(ra.json.data.id, rb.json.data.id);
  });

  it('forgets a key after 24 hours', async () => {
    const { key, project_id } = await t.key('idem', 'expiry');
    const k = uniqueKey();
    assert.equal((await t.call('POST', '/media', { key, body: { title: 'x' }, headers: idem(k) })).status, 201);
    const deps = t.server.runtime.deps;
    const realClock = deps.clock;
    deps.clock = { now: () => new Date(Date.now() + 25 * 3600 * 1000) };
    try {
      const res = await t.call('POST', '/media', { key, body: { title: 'x' }, headers: idem(k) });
      assert.equal(res.status, 201);
      assert.equal(res.headers['idempotent-replayed'], undefined);
    } finally {
      deps.clock = realClock;
    }
    assert.equal(await count('media', project_id), 2);
  });

  for (const [label, path, body] of [
    ['POST /media', '/media', { title: 'concurrent' }],
    ['POST /files (slow: fetch + probe)', '/files', { url: '' }],
  ] as const) {
    it(`twenty concurrent identical ${label} requests create exactly one resource`, async () => {
      const { key, project_id } = await t.key('idem', `concurrent-${path}`);
      const k = uniqueKey();
      const payload = path === '/files' ? { url: origin.url('/fixtures/video-mp4') } : body;
      const results = await Promise.all(
        Array.from({ length: 20 }, () => t.call('POST', path, { key, body: payload, headers: idem(k) })),
      );
      const statuses = results.map((r) => r.status);
      for (const r of results) {
        assert.ok(
          r.status === 201 || (r.status === 409 && r.json.error.code === 'idempotency_request_in_progress'),
          `unexpected ${r.status} ${r.text}`,
        );
      }
      const created = results.filter((r) => r.status === 201);
      assert.ok(created.length >= 1, `statuses ${statuses.join(',')}`);
      assert.equal(new Set(created.map((r) => r.json.data.id)).size, 1, 'every 201 carries the same resource');
      assert.equal(await count(path === '/files' ? 'files' : 'media', project_id), 1);
      // Once finished, a retry gets the stored answer.
      const later = await t.call('POST', path, { key, body: payload, headers: idem(k) });
      assert.equal(later.status, 201);
      assert.equal(later.headers['idempotent-replayed'], 'true');
    });
  }
});
