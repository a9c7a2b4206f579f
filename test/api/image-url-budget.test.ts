import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import fs from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { fixture } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// A per-project budget for the image-URL cache (issue 24, docs/image-urls.md#delivery-and-the-cache):
// a project's misses evict its own least recently used results, not another project's; the
// budget is set and its usage shown through /project/image-url-settings in both generations.

const WHOLE = 400_000;
let t: TestServer;

interface Project {
  key: string;
  id: string;
  imk: string;
  file: string;
}

const sign = (key: string, signedPath: string) => createHmac('sha256', key).update(signedPath).digest('base64url');
const imgUrl = (p: Project, options: string) =>
  `/img/${p.id}/${sign(p.imk, `/${options}/${p.file}`)}/${options}/${p.file}`;

async function get(url: string): Promise<{ status: number; etag: string; body: Buffer }> {
  const res = await request(`${t.base}${url}`, { dispatcher: t.agent });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, etag: String(res.headers.etag ?? '').replaceAll('"', ''), body };
}

async function project(name: string): Promise<Project> {
  const k = await t.key('budget', name);
  const revealed = await t.call('POST', '/project/image-url-key/reveal', { key: k.key });
  assert.equal(revealed.status, 200, revealed.text);
  const res = await request(`${t.base}/d/${k.project_id}/photo.jpg`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${k.key}` },
    body: await fs.readFile(await fixture('image-jpeg')),
    dispatcher: t.agent,
  });
  assert.equal(res.statusCode, 201);
  const file = ((await res.body.json()) as { data: { id: string } }).data.id;
  return { key: k.key, id: k.project_id, imk: revealed.json.data.key, file };
}

/** Computations (miss) and cache hits so far, from /metrics. */
async function results(): Promise<{ miss: number; hit: number }> {
  const text = (await get('/metrics')).body.toString();
  const count = (r: string) =>
    Number(new RegExp(`^mediad_image_url_results_total\\{result="${r}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { miss: count('miss'), hit: count('hit') };
}

const rows = (projectId: string) =>
  t.server.runtime.deps.db
    .selectFrom('image_derivatives')
    .select(['id', 'size', 'last_used'])
    .where('project_id', '=', projectId)
    .orderBy('last_used')
    .execute();

/** Waits until `check` holds: results are stored (and evicted) after the answer is sent. */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 250; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** Requests a new result and waits for its row; its last use is set `ageS` seconds ago (an LRU order). */
async function make(p: Project, options: string, ageS: number): Promise<string> {
  const res = await get(imgUrl(p, options));
  assert.equal(res.status, 200);
  const db = t.server.runtime.deps.db;
  await until(`${options} stored`, async () =>
    Boolean(await db.selectFrom('image_derivatives').select('id').where('id', '=', res.etag).executeTakeFirst()),
  );
  const at = new Date(Date.now() - ageS * 1000).toISOString();
  await db.updateTable('image_derivatives').set({ last_used: at, created: at }).where('id', '=', res.etag).execute();
  return res.etag;
}

const settings = (p: Project, body?: unknown, headers: Record<string, string> = {}) =>
  t.call(body === undefined ? 'GET' : 'PATCH', '/project/image-url-settings', { key: p.key, body, headers });

before(async () => {
  t = await startTestServer({
    MEDIAD_IMAGE_URL_CACHE_BYTES: String(WHOLE),
    MEDIAD_IMAGE_URL_MISSES_PER_MINUTE: '0',
  });
});
after(() => t?.stop());

describe('image URL cache: a budget per project', () => {
  it('evicts only the small project’s own least recently used results; the other’s stay cached (hits, no computation)', async () => {
    const other = await project('other');
    const small = await project('small');
    const kept = [];
    for (let i = 0; i < 3; i++) kept.push(await make(other, `width:${150 + i},format:jpeg,quality:90`, 600 - i));

    // The small project's first result sets the scale: its budget holds two results like it, not three.
    const first = await make(small, 'width:200,format:jpeg,quality:90', 500);
    const size = Number((await rows(small.id))[0]!.size);
    const budget = Math.floor(size * 2.5);
    const set = await settings(small, { cache_bytes: budget });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.json.data.cache_bytes, budget);
    assert.equal(set.json.data.cache.budget_bytes, budget);
    const made = [first];
    for (let i = 1; i < 5; i++) {
      made.push(await make(small, `width:${200 + i},format:jpeg,quality:90`, 500 - i * 10));
      await until(
        'the small project within its budget',
        async () => (await rows(small.id)).reduce((s, r) => s + Number(r.size), 0) <= budget,
      );
    }
    const left = await rows(small.id);
    assert.deepEqual(
      left.map((r) => r.id),
      made.slice(3),
      'the two most recently used are kept, the three older ones evicted',
    );
    // The other project's results were older than all of the small project's, yet none went.
    assert.deepEqual((await rows(other.id)).map((r) => r.id).sort(), [...kept].sort());
    const before = await results();
    for (let i = 0; i < 3; i++)
      assert.equal((await get(imgUrl(other, `width:${150 + i},format:jpeg,quality:90`))).status, 200);
    const afterHits = await results();
    assert.equal(afterHits.miss - before.miss, 0, 'served from the cache, not computed again');
    assert.equal(afterHits.hit - before.hit, 3);
    // An evicted result of the small project is computed again.
    const again = await get(imgUrl(small, 'width:200,format:jpeg,quality:90'));
    assert.equal(again.status, 200);
    assert.equal((await results()).miss - afterHits.miss, 1);

    // The settings show the budget in force and what the project's results take: once the result
    // computed again is stored (after its answer) and the eviction it causes is done.
    await until('the result computed again stored, the small project within its budget', async () => {
      const now = await rows(small.id);
      return now.some((r) => r.id === again.etag) && now.reduce((s, r) => s + Number(r.size), 0) <= budget;
    });
    const now = await rows(small.id);
    const shown = (await settings(small)).json.data;
    assert.deepEqual(shown.cache, {
      budget_bytes: budget,
      default_bytes: WHOLE,
      max_bytes: WHOLE,
      used_bytes: now.reduce((s, r) => s + Number(r.size), 0),
      results: now.length,
    });
    const otherShown = (await settings(other)).json.data;
    assert.equal(otherShown.cache_bytes, null, 'no budget of its own: the server default');
    assert.equal(otherShown.cache.results, 3);

    // A burst of concurrent misses: the small project ends within its budget, the other untouched.
    const burst = await Promise.all(
      Array.from({ length: 8 }, (_, i) => get(imgUrl(small, `width:${210 + i},format:jpeg,quality:90`))),
    );
    assert.ok(burst.every((r) => r.status === 200));
    // Every burst result stored (or stored and evicted): the rows stop changing, and only burst
    // results, the most recently used, are left within the budget.
    const ids = new Set(burst.map((r) => r.etag));
    let last = '';
    let same = 0;
    await until('the small project settled after the burst', async () => {
      const now = await rows(small.id);
      const seen = now.map((r) => r.id).join();
      same = seen === last ? same + 1 : 0;
      last = seen;
      return same >= 25 && now.every((r) => ids.has(r.id));
    });
    const settled = await rows(small.id);
    assert.ok(settled.length >= 1, 'the newest results are kept');
    assert.ok(settled.reduce((s, r) => s + Number(r.size), 0) <= budget);
    assert.deepEqual((await rows(other.id)).map((r) => r.id).sort(), [...kept].sort());
  });

  it('serves but does not keep a result bigger than the project’s budget; a lower budget evicts at once', async () => {
    const p = await project('tiny');
    await make(p, 'width:120,format:jpeg', 100);
    await make(p, 'width:121,format:jpeg', 90);
    const lowered = await settings(p, { cache_bytes: 100 });
    assert.equal(lowered.status, 200, lowered.text);
    assert.deepEqual([lowered.json.data.cache.used_bytes, lowered.json.data.cache.results], [0, 0]);
    assert.equal((await rows(p.id)).length, 0, 'evicted by the PATCH, not at the next miss');
    const m0 = await results();
    const url = imgUrl(p, 'width:130,format:jpeg');
    const first = await get(url);
    assert.equal(first.status, 200);
    assert.ok(first.body.length > 100);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await rows(p.id)).length, 0, 'not stored');
    assert.equal((await get(url)).status, 200);
    assert.equal((await results()).miss - m0.miss, 2, 'computed each time');
    // Back to the server default: kept again.
    const reset = await settings(p, { cache_bytes: null });
    assert.deepEqual([reset.json.data.cache_bytes, reset.json.data.cache.budget_bytes], [null, WHOLE]);
    await make(p, 'width:130,format:jpeg', 0);
  });

  it('refuses a bad cache_bytes with 400 naming it; clamps one above the whole cache’s budget; both generations', async () => {
    const p = await project('values');
    for (const bad of [-1, 1.5, '1000', true, {}, Number.MAX_SAFE_INTEGER + 2]) {
      const res = await settings(p, { cache_bytes: bad });
      assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${res.text}`);
      assert.equal(res.json.error.code, 'validation_failed');
      assert.ok(
        res.json.error.details.every((d: { field: string }) => d.field === 'cache_bytes'),
        JSON.stringify(res.json.error.details),
      );
    }
    const bare = { 'accept-version': '2025-08-20' };
    const refused = await settings(p, { cache_bytes: -5 }, bare);
    assert.equal(refused.status, 400);
    assert.equal(refused.json.code, 'validation_failed');
    assert.equal(refused.json.details[0].field, 'cache_bytes');
    const clamped = await settings(p, { cache_bytes: WHOLE * 10 }, bare);
    assert.equal(clamped.status, 200, clamped.text);
    assert.equal(clamped.json.object, 'image_url_settings');
    assert.equal(clamped.json.cache_bytes, WHOLE, 'lowered to the whole cache’s budget');
    assert.equal(clamped.json.cache.budget_bytes, WHOLE);
    const zero = await settings(p, { cache_bytes: 0, allow_unsigned_presets: true });
    assert.equal(zero.json.data.cache_bytes, 0);
    assert.equal(zero.json.data.allow_unsigned_presets, true);
    assert.equal((await settings(p, {})).json.data.cache_bytes, 0, 'an empty patch changes nothing');
    const doc = (await t.call('GET', '/openapi.json')).json;
    const patch = doc.paths['/project/image-url-settings'].patch;
    const schema = JSON.stringify(patch.requestBody.content['application/json'].schema);
    assert.match(schema, /cache_bytes/);
  });
});

describe('MEDIAD_IMAGE_URL_PROJECT_CACHE_BYTES', () => {
  it('is every project’s budget unless its settings name one', async () => {
    const p = await project('default');
    const shown = (await settings(p)).json.data.cache;
    assert.equal(shown.default_bytes, WHOLE, 'unset: the whole cache’s budget');
    const { loadConfig } = await import('../../src/config.js');
    const base = { MEDIAD_IMAGE_URL_CACHE_BYTES: '1000' };
    assert.equal(loadConfig({ ...base, MEDIAD_IMAGE_URL_PROJECT_CACHE_BYTES: '400' }).imageUrls.projectCacheBytes, 400);
    assert.equal(loadConfig(base).imageUrls.projectCacheBytes, 1000);
    assert.throws(
      () => loadConfig({ ...base, MEDIAD_IMAGE_URL_PROJECT_CACHE_BYTES: '2000' }),
      /MEDIAD_IMAGE_URL_PROJECT_CACHE_BYTES must be a whole number from 0 to 1000/,
    );
  });
});
