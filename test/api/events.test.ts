import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let key: string;
const media: any[] = [];

before(async () => {
  t = await startTestServer({ MEDIAD_SERVE_WORKERS: 'false' });
  ({ key } = await t.key('events', 'main'));
  // Events are written in the transaction of the change, so they are readable at once.
  for (const title of ['one', 'two', 'three'])
    media.push((await t.call('POST', '/media', { key, body: { title } })).json.data);
  await t.call('PATCH', `/media/${media[0].id}`, { key, body: { title: 'uno' } });
});
after(() => t.stop());

describe('GET /events', () => {
  it('lists the project events newest first', async () => {
    const res = await t.call('GET', '/events', { key });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.meta.type, 'list');
    assert.equal(res.json.meta.total, 4);
    assert.deepEqual(
      res.json.data.map((e: any) => e.type),
      ['media.updated', 'media.created', 'media.created', 'media.created'],
    );
    const [updated] = res.json.data;
    assert.match(updated.id, /^evt_[A-Za-z0-9]{16}$/);
    assert.equal(updated.object, 'event');
    assert.equal(updated.data.id, media[0].id);
    assert.equal(updated.data.title, 'uno');
    assert.deepEqual(Object.keys(updated).sort(), ['created', 'data', 'id', 'object', 'type']);
  });

  it('filters by type and paginates, keeping the filter in the links', async () => {
    const first = await t.call('GET', '/events?type=media.created&limit=2', { key });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(
      [first.json.meta.total, first.json.meta.pages, first.json.meta.limit, first.json.data.length],
      [3, 2, 2, 2],
    );
    assert.ok(first.json.data.every((e: any) => e.type === 'media.created'));
    assert.equal(first.json.links.prev, null);
    assert.match(first.json.links.next, /type=media.created/);
    const second = await t.call('GET', first.json.links.next, { key });
    assert.equal(second.json.data.length, 1);
    assert.equal(second.json.links.next, null);
    const seen = [...first.json.data, ...second.json.data].map((e: any) => e.data.id);
    assert.deepEqual(seen.sort(), media.map((m) => m.id).sort());
    const past = await t.call('GET', '/events?type=media.created&limit=2&page=5', { key });
    assert.deepEqual([past.status, past.json.data.length], [200, 0]);
  });

  it('refuses an unknown type and bad paging with field details', async () => {
    for (const [query, field] of [
      ['type=media.exploded', 'query.type'],
      ['limit=0', 'query.limit'],
      ['page=0', 'query.page'],
    ]) {
      const res = await t.call('GET', `/events?${query}`, { key });
      assert.equal(res.status, 400, query);
      assert.equal(res.json.error.details[0].field, field);
    }
  });
});

describe('GET /events/{id}', () => {
  it('returns one event of the project and 404 for anything else', async () => {
    const [latest] = (await t.call('GET', '/events?limit=1', { key })).json.data;
    const res = await t.call('GET', `/events/${latest.id}`, { key });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.data, latest);
    assert.equal(res.json.links.self, `${t.base}/events/${latest.id}`);
    assert.equal(res.json.links.parent, `${t.base}/events`);

    const other = await t.key('events', 'other');
    const foreign = await t.call('GET', `/events/${latest.id}`, { key: other.key });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.json.error.code, 'not_found');
    assert.equal((await t.call('GET', '/events', { key: other.key })).json.meta.total, 0);
    assert.equal((await t.call('GET', '/events/evt_nope', { key })).status, 404);
    assert.equal((await t.call('GET', '/events')).status, 401);
  });
});
