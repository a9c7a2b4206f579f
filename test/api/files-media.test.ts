import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let origin: Origin;
let key: string;
let projectId: string;
let otherKey: string;

before(async () => {
  origin = await startOrigin();
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host, MEDIAD_MAX_PIXELS: '50000000' });
  const k = await t.key('acme', 'prod');
  key = k.key;
  projectId = k.project_id;
  otherKey = (await t.key('acme', 'staging')).key;
});
after(async () => {
  await t.stop();
  await origin.close();
});

const post = (path: string, body: unknown, k = key) => t.call('POST', path, { key: k, body });

function assertEnvelope(json: any, type: 'object' | 'list') {
  assert.match(json.meta.request_id, /^req_[A-Za-z0-9]{20}$/);
  assert.match(json.meta.org_id, /^org_/);
  assert.equal(json.meta.project_id, projectId);
  assert.match(json.meta.version, /^\d{4}-\d{2}-\d{2}$/);
  assert.equal(json.meta.type, type);
  assert.equal(json.error, null);
}

describe('authentication', () => {
  it('refuses a missing key with 401 and a Bearer challenge', async () => {
    const res = await t.call('GET', '/files');
    assert.equal(res.status, 401);
    assert.equal(res.json.error.code, 'unauthorized');
    assert.match(res.headers['www-authenticate']!, /^Bearer/);
    assert.equal(res.json.data, null);
    assert.equal(res.json.meta.type, 'error');
  });

  it('refuses an invalid and a revoked key', async () => {
    assert.equal((await t.call('GET', '/files', { key: 'mdk_nope' })).status, 401);
    assert.equal((await t.call('GET', '/files', { headers: { authorization: `Basic ${key}` } })).status, 401);
    const k = await t.key('acme', 'prod');
    assert.equal((await t.call('GET', '/files', { key: k.key })).status, 200);
    const { revokeKey } = await import('../../src/services/people/keys.js');
    assert.equal(await revokeKey(t.server.runtime.deps, k.key_id), true);
    assert.equal((await t.call('GET', '/files', { key: k.key })).status, 401);
  });

  it('stores only a hash of the key', async () => {
    const rows = await t.server.runtime.deps.db.selectFrom('api_keys').select('key_hash').execute();
    assert.ok(rows.length > 0);
    for (const r of rows) assert.notEqual(r.key_hash, key);
    assert.ok(rows.some((r) => /^[0-9a-f]{64}$/.test(r.key_hash)));
  });

  it('answers /health without a key', async () => {
    const res = await t.call('GET', '/health');
    assert.equal(res.status, 200);
    assert.equal(res.json.data.status, 'ok');
  });
});

describe('POST /files', () => {
  it('ingests a video: probes it, creates its media with ref original and a background colour', async () => {
    const res = await post('/files', { url: origin.url('/fixtures/video-mp4'), metadata: { source: 'test' } });
    assert.equal(res.status, 201, res.text);
    assertEnvelope(res.json, 'object');
    const f = res.json.data;
    assert.match(f.id, /^file_[A-Za-z0-9]{16,}$/);
    assert.equal(f.object, 'source');
    assert.equal(f.kind, 'video');
    assert.equal(f.format, 'mp4');
    assert.equal(f.type, 'video/mp4');
    assert.equal(f.width, 320);
    assert.equal(f.height, 240);
    assert.ok(Math.abs(f.duration - 2) < 0.2, `duration ${f.duration}`);
    assert.ok(f.filesize > 1000);
    assert.equal(f.filename, `${f.id}.mp4`);
    assert.equal(f.ref, 'original');
    assert.equal(f.status, 'ready');
    assert.deepEqual(f.metadata, { source: 'test' });
    assert.equal(res.json.links.self, `${t.base}/files/${f.id}`);
    assert.equal(res.json.links.parent, `${t.base}/files`);

    const media = (await t.call('GET', `/media/${f.media_id}`, { key })).json.data;
    assert.equal(media.title, 'video-mp4', 'titled by the source’s file name, not by an id');
    assert.equal(media.kind, 'video');
    assert.equal(media.width, 320);
    assert.match(media.background, /^#[0-9a-f]{6}$/);
    assert.equal(media.urls.original, f.url);
    assert.equal(media.files.length, 1);
    assert.equal(media.files[0].media_id, undefined, 'embedded files omit media_id');
    assert.equal(media.files[0].status, 'ready', 'embedded files carry status (the SDKs require it)');
    assert.equal(media.files[0].metadata, undefined);

    const events = await t.server.runtime.deps.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('project_id', '=', projectId)
      .execute();
    const created = events.find((e) => e.type === 'media.created' && JSON.parse(e.data).id === f.media_id);
    assert.ok(created, 'media.created recorded');
  });

  it('ingests an image with its average colour and no duration', async () => {
    const res = await post('/files', {
      url: origin.url('/fixtures/image-png'),
      folder: 'pics/2026',
      filename: 'blue.png',
    });
    assert.equal(res.status, 201, res.text);
    const f = res.json.data;
    assert.equal(f.kind, 'image');
    assert.equal(f.type, 'image/png');
    assert.equal(f.duration, undefined);
    assert.equal(f.folder, 'pics/2026');
    assert.equal(f.filename, 'blue.png');
    assert.equal(f.url, `${t.base}/d/${projectId}/pics/2026/blue.png`);
    const media = (await t.call('GET', `/media/${f.media_id}`, { key })).json.data;
    assert.equal(media.background, '#336699');
  });

  it('ingests audio', async () => {
    const res = await post('/files', { url: origin.url('/fixtures/audio-mp3') });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json.data.kind, 'audio');
    assert.equal(res.json.data.type, 'audio/mpeg');
    assert.ok(Math.abs(res.json.data.duration - 3) < 0.2);
    assert.equal(res.json.data.width, undefined);
  });

  it('refuses a taken folder/filename with 409 and replaces nothing', async () => {
    const res = await post('/files', {
      url: origin.url('/fixtures/image-png'),
      folder: 'pics/2026',
      filename: 'blue.png',
    });
    assert.equal(res.status, 409);
    assert.equal(res.json.error.code, 'file_conflict');
  });

  it('attaches to an existing media, and 404s for another project’s media', async () => {
    const media = (await post('/media', { title: 'Holiday' })).json.data;
    const res = await post('/files', { url: origin.url('/fixtures/image-jpeg'), media_id: media.id, ref: 'poster' });
    assert.equal(res.status, 201, res.text);
    const after = (await t.call('GET', `/media/${media.id}`, { key })).json.data;
    assert.equal(after.kind, 'image', 'an empty media takes its facts from its first file');
    assert.equal(after.title, 'Holiday', 'a file added to a media leaves its title');
    assert.equal(after.urls.poster, res.json.data.url);
    const foreign = await post('/files', { url: origin.url('/fixtures/image-jpeg'), media_id: media.id }, otherKey);
    assert.equal(foreign.status, 404);
  });

  it('answers 422 for a file that is not media, and for a source that answers 404', async () => {
    const bad = await post('/files', { url: origin.url('/fixtures/random-bytes') });
    assert.equal(bad.status, 422);
    assert.equal(bad.json.error.code, 'media_unsupported');
    const missing = await post('/files', { url: origin.url('/status/404') });
    assert.equal(missing.status, 422);
    assert.equal(missing.json.error.code, 'source_rejected');
    const broken = await post('/files', { url: origin.url('/status/503') });
    assert.equal(broken.json.error.code, 'source_unreachable');
  });

  it('refuses an image over the pixel limit from its header', async () => {
    const res = await post('/files', { url: origin.url('/fixtures/image-huge-header') });
    assert.equal(res.status, 422);
    assert.equal(res.json.error.code, 'media_limit_exceeded');
  });

  it('validates the body with per-field details', async () => {
    const res = await post('/files', { url: 'not a url', ref: 7, extra: true });
    assert.equal(res.status, 400);
    assert.equal(res.json.error.code, 'validation_failed');
    const fields = res.json.error.details.map((d: any) => d.field).sort();
    assert.deepEqual(fields, ['extra', 'ref', 'url']);
    const missing = await post('/files', {});
    assert.equal(missing.json.error.details[0].field, 'url');
    const badFolder = await post('/files', { url: origin.url('/fixtures/image-png'), folder: 'a/../b' });
    assert.equal(badFolder.status, 400);
  });
});

describe('files: read, update, delete', () => {
  it('gets, patches and deletes a file; another project sees 404', async () => {
    const f = (await post('/files', { url: origin.url('/fixtures/image-png') })).json.data;
    const got = await t.call('GET', `/files/${f.id}`, { key });
    assert.equal(got.status, 200);
    assert.deepEqual(got.json.data, f);
    assert.equal((await t.call('GET', `/files/${f.id}`, { key: otherKey })).status, 404);
    assert.equal((await t.call('PATCH', `/files/${f.id}`, { key: otherKey, body: { ref: 'x' } })).status, 404);
    assert.equal((await t.call('DELETE', `/files/${f.id}`, { key: otherKey })).status, 404);

    const patched = await t.call('PATCH', `/files/${f.id}`, {
      key,
      body: { folder: 'renamed', filename: 'cover.png', ref: 'cover', metadata: { a: 1 } },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json.data.url, `${t.base}/d/${projectId}/renamed/cover.png`);
    assert.deepEqual(patched.json.data.metadata, { a: 1 });
    assert.ok(patched.json.data.updated >= f.updated);
    assert.equal((await t.call('GET', patched.json.data.url)).status, 200, 'bytes follow the new path');

    const del = await t.call('DELETE', `/files/${f.id}`, { key });
    assert.equal(del.status, 200);
    assert.deepEqual(del.json.data, { id: f.id, object: 'source', deleted: true, message: `${f.id} deleted` });
    assert.equal((await t.call('GET', `/files/${f.id}`, { key })).status, 404);
    assert.equal((await t.call('GET', patched.json.data.url)).status, 404);
    const media = (await t.call('GET', `/media/${f.media_id}`, { key })).json.data;
    assert.equal(media.files.length, 0);
    assert.deepEqual(media.urls, {});
  });
});

describe('media', () => {
  it('creates, patches only what is sent, lists and deletes with its files', async () => {
    const created = await post('/media', { title: 'T', alt: 'A', metadata: { k: 'v' } });
    assert.equal(created.status, 201);
    assertEnvelope(created.json, 'object');
    const m = created.json.data;
    assert.match(m.id, /^med_/);
    assert.equal(m.object, 'media');
    const patched = await t.call('PATCH', `/media/${m.id}`, { key, body: { alt: 'B' } });
    assert.equal(patched.json.data.title, 'T');
    assert.equal(patched.json.data.alt, 'B');
    assert.deepEqual(patched.json.data.metadata, { k: 'v' });
    assert.ok(patched.json.data.updated > m.updated);
    assert.equal((await t.call('PATCH', `/media/${m.id}`, { key, body: { title: 5 } })).status, 400);
    assert.equal((await t.call('GET', `/media/${m.id}`, { key: otherKey })).status, 404);

    const file = (await post('/files', { url: origin.url('/fixtures/image-png'), media_id: m.id })).json.data;
    const del = await t.call('DELETE', `/media/${m.id}`, { key });
    assert.equal(del.status, 200);
    assert.equal((await t.call('GET', `/media/${m.id}`, { key })).status, 404);
    assert.equal((await t.call('GET', `/files/${file.id}`, { key })).status, 404);
  });
});

describe('pagination', () => {
  it('pages with exact totals and links; a page past the end is empty', async () => {
    const k = (await t.key('paging', 'p')).key;
    for (let i = 0; i < 5; i++)
      assert.equal((await t.call('POST', '/media', { key: k, body: { title: `m${i}` } })).status, 201);
    const p1 = (await t.call('GET', '/media?limit=2', { key: k })).json;
    assert.equal(p1.meta.total, 5);
    assert.equal(p1.meta.pages, 3);
    assert.equal(p1.meta.page, 1);
    assert.equal(p1.meta.limit, 2);
    assert.equal(p1.data.length, 2);
    assert.equal(p1.links.prev, null);
    assert.equal(p1.links.next, `${t.base}/media?page=2&limit=2`);
    assert.equal(p1.links.last, `${t.base}/media?page=3&limit=2`);
    const p3 = (await t.call('GET', p1.links.last, { key: k })).json;
    assert.equal(p3.data.length, 1);
    assert.equal(p3.links.next, null);
    assert.equal(p3.links.prev, `${t.base}/media?page=2&limit=2`);
    const seen = new Set(
      [...p1.data, ...(await t.call('GET', p1.links.next, { key: k })).json.data, ...p3.data].map((m: any) => m.id),
    );
    assert.equal(seen.size, 5, 'pages do not overlap');
    const past = (await t.call('GET', '/media?page=9&limit=2', { key: k })).json;
    assert.deepEqual(past.data, []);
    assert.equal(past.meta.total, 5);
    const empty = (await t.call('GET', '/files', { key: k })).json;
    assert.equal(empty.meta.total, 0);
    assert.equal(empty.meta.pages, 1);
    assert.equal(empty.meta.limit, 20);
  });

  it('refuses bad page and limit values', async () => {
    for (const q of ['limit=0', 'limit=101', 'page=0', 'page=1.5', 'limit=abc']) {
      const res = await t.call('GET', `/files?${q}`, { key });
      assert.equal(res.status, 400, q);
      assert.equal(res.json.error.code, 'validation_failed');
    }
  });
});

describe('protocol errors', () => {
  it('malformed JSON 400, wrong content type 415, body too large 413, wrong method 405, unknown route 404', async () => {
    const bad = await t.call('POST', '/media', {
      key,
      raw: '{"title":',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'invalid_json');
    const type = await t.call('POST', '/media', {
      key,
      raw: 'title=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(type.status, 415);
    assert.equal(type.json.error.code, 'unsupported_media_type');
    const big = await t.call('POST', '/media', { key, body: { metadata: { blob: 'x'.repeat(2 * 1024 * 1024) } } });
    assert.equal(big.status, 413);
    assert.equal(big.json.error.code, 'payload_too_large');
    const method = await t.call('PUT', '/files', { key, body: {} });
    assert.equal(method.status, 405);
    assert.match(method.headers.allow!, /GET/);
    const malformed = await t.call('GET', '/files/%E0%A4%A', { key });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.json.error.code, 'bad_request', 'errors before routing use the envelope too');
    const unknown = await t.call('GET', '/nothing', { key });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.error.code, 'not_found');
  });

  it('sends the request id as a header and refuses unknown API versions', async () => {
    const ok = await t.call('GET', '/files', { key, headers: { 'accept-version': '2025-07-01' } });
    assert.equal(ok.headers['x-request-id'], ok.json.meta.request_id);
    const bad = await t.call('GET', '/files', { key, headers: { 'accept-version': '1999-01-01' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'unsupported_version');
  });
});
