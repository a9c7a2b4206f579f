import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer, type ApiResponse, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';

// Both API generations (issue 13): the envelope of SPEC.md (2025-01-01, 2025-07-01) and the bare
// generation of the 1.0 SDKs (2025-08-20), chosen per request by Accept-Version, ACCEPT_VERSION
// or the project's default.

let t: TestServer;
let origin: Origin;
let key: string;

const BARE = { 'accept-version': '2025-08-20' };

before(async () => {
  origin = await startOrigin();
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host, MEDIAD_WORKER_CONCURRENCY: '1' });
  ({ key } = await t.key('gen', 'main'));
});
after(async () => {
  await t.stop();
  await origin.close();
});

/** The Link header as {rel: url}. */
function links(res: ApiResponse): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (res.headers.link ?? '').split(/,\s*(?=<)/)) {
    const m = /^<([^>]+)>;\s*rel="([^"]+)"$/.exec(part.trim());
    if (m) out[m[2]!] = m[1]!;
  }
  return out;
}

const isEnvelope = (body: any) =>
  body && typeof body === 'object' && 'meta' in body && 'data' in body && 'links' in body;

describe('version precedence', () => {
  it('a new project answers in the envelope generation, and says which version in meta and Mediad-Version', async () => {
    const res = await t.call('GET', '/files', { key });
    assert.equal(res.status, 200);
    assert.ok(isEnvelope(res.json));
    assert.equal(res.json.meta.version, '2025-07-01');
    assert.equal(res.headers['mediad-version'], '2025-07-01');
    assert.equal((await t.call('GET', '/project', { key })).json.data.api_version, '2025-07-01');
  });

  it('Accept-Version, else ACCEPT_VERSION, else the project default; latest is the newest; unknown is 400', async () => {
    const bare = await t.call('GET', '/files', { key, headers: BARE });
    assert.ok(Array.isArray(bare.json), bare.text);
    assert.equal(bare.headers['mediad-version'], '2025-08-20');
    const underscore = await t.call('GET', '/files', { key, headers: { accept_version: '2025-08-20' } });
    assert.ok(Array.isArray(underscore.json), 'ACCEPT_VERSION, as the 1.0 SDKs send it');
    const both = await t.call('GET', '/files', {
      key,
      headers: { 'accept-version': '2025-01-01', accept_version: '2025-08-20' },
    });
    assert.equal(both.json.meta.version, '2025-01-01', 'Accept-Version wins');
    const latest = await t.call('GET', '/files', { key, headers: { 'accept-version': 'latest' } });
    assert.ok(Array.isArray(latest.json));
    assert.equal(latest.headers['mediad-version'], '2025-08-20');
    for (const headers of [{ 'accept-version': '2024-13-01' }, { accept_version: 'bogus' }] as Record<
      string,
      string
    >[]) {
      const bad = await t.call('GET', '/files', { key, headers });
      assert.equal(bad.status, 400);
      assert.equal(bad.json.error.code, 'unsupported_version');
    }
  });

  it('a project pinned to 2025-08-20 answers bare to requests that name no version, POST /automations included', async () => {
    const pinned = await t.key('gen', 'pinned');
    const patch = await t.call('PATCH', '/project', { key: pinned.key, body: { api_version: 'latest' } });
    assert.equal(patch.status, 200);
    assert.equal(
      patch.json.data.api_version,
      '2025-08-20',
      'the PATCH itself is answered in the version it was made in',
    );
    const auto = await t.call('POST', '/automations', {
      key: pinned.key,
      body: { trigger: { kind: 'event', event: 'media.created' }, workflow: [{ kind: 'image', width: 8 }] },
    });
    assert.equal(auto.status, 201);
    assert.equal(auto.json.object, 'automation');
    assert.match(auto.json.id, /^auto_/);
    // A request may still ask for the envelope.
    const env = await t.call('GET', '/automations', { key: pinned.key, headers: { 'accept-version': '2025-07-01' } });
    assert.ok(isEnvelope(env.json));
    const back = await t.call('PATCH', '/project', { key: pinned.key, body: { api_version: '2025-07-01' } });
    assert.equal(back.json.api_version, '2025-07-01', 'made under the bare default, answered bare');
    assert.ok(isEnvelope((await t.call('GET', '/project', { key: pinned.key })).json));
    const bad = await t.call('PATCH', '/project', { key: pinned.key, body: { api_version: '2030-01-01' } });
    assert.equal(bad.status, 400);
  });
});

describe('answers outside the routes', () => {
  it('errors raised before routing (a malformed URL) are in the request’s generation, with Mediad-Version', async () => {
    const bare = await t.call('GET', '/media/%ZZ', { key, headers: BARE });
    assert.equal(bare.status, 400, bare.text);
    assert.equal(bare.headers['mediad-version'], '2025-08-20');
    assert.ok(!isEnvelope(bare.json), bare.text);
    assert.deepEqual(Object.keys(bare.json).sort(), ['code', 'message', 'status']);
    assert.equal(bare.json.code, 'bad_request');
    const envelope = await t.call('GET', '/media/%ZZ', { key, headers: { 'accept-version': '2025-01-01' } });
    assert.equal(envelope.headers['mediad-version'], '2025-01-01');
    assert.ok(isEnvelope(envelope.json));
    assert.equal(envelope.json.meta.version, '2025-01-01');
    // Unknown routes and bodies that are not JSON, likewise.
    const missing = await t.call('GET', '/nowhere', { key, headers: BARE });
    assert.equal(missing.status, 404);
    assert.equal(missing.json.code, 'not_found');
    const broken = await t.call('POST', '/media', {
      key,
      headers: { ...BARE, 'content-type': 'application/json' },
      raw: '{',
    });
    assert.equal(broken.status, 400);
    assert.equal(broken.json.code, 'invalid_json');
  });

  it('/health and file delivery follow a known Accept-Version and ignore an unknown one (README)', async () => {
    const bare = await t.call('GET', '/health', { headers: BARE });
    assert.deepEqual([bare.status, bare.headers['mediad-version'], bare.json], [200, '2025-08-20', { status: 'ok' }]);
    const unknown = await t.call('GET', '/health', { headers: { 'accept-version': '1999-01-01' } });
    assert.equal(unknown.status, 200);
    assert.ok(isEnvelope(unknown.json));
    const gone = await t.call('GET', '/d/prj_nope/a/b.png', { headers: BARE });
    assert.equal(gone.status, 404);
    assert.equal(gone.json.code, 'not_found');
    assert.equal(gone.headers['mediad-version'], '2025-08-20');
  });
});

describe('the bare generation', () => {
  it('answers objects as themselves, lists as arrays with Link and X-Total-Count, errors as {code, message, status}', async () => {
    const created = await t.call('POST', '/files', {
      key,
      headers: BARE,
      body: { url: origin.url('/fixtures/image-png'), folder: 'bare' },
    });
    assert.equal(created.status, 201, created.text);
    assert.match(created.json.id, /^file_/);
    assert.equal(created.json.object, 'source');
    const id = created.json.id;
    const got = await t.call('GET', `/files/${id}`, { key, headers: BARE });
    assert.deepEqual(got.json, created.json);
    const patched = await t.call('PATCH', `/files/${id}`, { key, headers: BARE, body: { metadata: { a: 1 } } });
    assert.deepEqual(patched.json.metadata, { a: 1 });
    // A page of files is rendered as JSON text where it is read (db/hot-reads.ts): the same array
    // alone, with the pagination in headers, and inside the envelope for the default generation.
    const page = await t.call('GET', '/files?limit=1', { key, headers: BARE });
    assert.equal(page.status, 200);
    assert.deepEqual(page.json, [patched.json]);
    assert.equal(page.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(page.headers['mediad-version'], '2025-08-20');
    assert.match(page.headers['x-total-count'] ?? '', /^[1-9]\d*$/);
    assert.match(page.headers.link ?? '', /<[^>]+\/files\?page=1&limit=1>; rel="self"/);
    const enveloped = await t.call('GET', '/files?limit=1', { key });
    assert.ok(isEnvelope(enveloped.json));
    assert.deepEqual(enveloped.json.data, page.json);
    assert.equal(enveloped.json.meta.total, Number(page.headers['x-total-count']));
    assert.equal(enveloped.headers['content-length'], String(Buffer.byteLength(enveloped.text)));
    const media = await t.call('GET', `/media/${created.json.media_id}`, { key, headers: BARE });
    assert.equal(media.json.object, 'media');
    assert.equal(media.json.files[0].status, 'ready', 'embedded files carry status');

    const missing = await t.call('GET', '/files/file_doesnotexist00', { key, headers: BARE });
    assert.equal(missing.status, 404);
    assert.deepEqual(Object.keys(missing.json).sort(), ['code', 'message', 'status']);
    assert.equal(missing.json.code, 'not_found');
    const invalid = await t.call('POST', '/files', { key, headers: BARE, body: { url: 'nope' } });
    assert.equal(invalid.status, 400);
    assert.equal(invalid.json.code, 'validation_failed');
    assert.equal(invalid.json.details[0].field, 'url');
    const unauthorized = await t.call('GET', '/files', { headers: BARE });
    assert.equal(unauthorized.status, 401);
    assert.equal(unauthorized.json.code, 'unauthorized');

    const deleted = await t.call('DELETE', `/files/${id}`, { key, headers: BARE });
    assert.deepEqual(deleted.json, { id, object: 'source', deleted: true, message: `${id} deleted` });
  });

  it('pages through a list by its Link header to the end', async () => {
    const project = await t.key('gen', 'paging');
    for (let i = 0; i < 5; i++) {
      assert.equal((await t.call('POST', '/media', { key: project.key, body: { title: `m${i}` } })).status, 201);
    }
    const seen: string[] = [];
    let url: string | undefined = '/media?limit=2';
    let pages = 0;
    while (url) {
      const res: ApiResponse = await t.call('GET', url, { key: project.key, headers: BARE });
      assert.equal(res.status, 200);
      assert.ok(Array.isArray(res.json));
      assert.equal(res.headers['x-total-count'], '5');
      const l = links(res);
      assert.ok(l.self && l.first && l.last);
      if (pages === 0) assert.equal(l.prev, undefined, 'no prev on the first page');
      seen.push(...res.json.map((m: { id: string }) => m.id));
      url = l.next;
      pages++;
    }
    assert.equal(pages, 3);
    assert.equal(new Set(seen).size, 5);
    // The envelope's list of the same page agrees.
    const env = await t.call('GET', '/media?limit=2&page=3', { key: project.key });
    assert.equal(env.json.meta.total, 5);
    assert.equal(env.json.links.next, null);
  });

  it('serves every resource bare: media, tasks, automations, events, webhooks, deliveries, project, signatures', async () => {
    const p = await t.key('gen', 'resources');
    const k = p.key;
    const get = (path: string) => t.call('GET', path, { key: k, headers: BARE });
    const post = (path: string, body: unknown) => t.call('POST', path, { key: k, headers: BARE, body });

    const media = await post('/media', { title: 'x' });
    assert.equal(media.status, 201);
    assert.equal(media.json.title, 'x');
    assert.equal((await get('/media')).json.length, 1);

    const task = await post('/tasks', { kind: 'ingest', url: origin.url('/fixtures/image-png') });
    assert.equal(task.status, 201);
    assert.equal(task.json.status, 'pending');
    assert.equal(task.json.output, null, 'a task shows output null until it completes');
    const done = await waitForTask(t, k, task.json.id);
    assert.equal(done.status, 'completed');
    assert.equal((await get(`/tasks/${task.json.id}`)).json.status, 'completed');
    assert.ok(Array.isArray((await get('/tasks?kind=ingest')).json));
    const failing = await post('/tasks', { kind: 'ingest', url: origin.url('/status/404') });
    const failed = await waitForTask(t, k, failing.json.id);
    assert.equal(failed.status, 'failed');
    assert.equal(typeof failed.error, 'string', 'a failed task’s error is the message');
    assert.equal(failed.error_code, 'source_rejected');

    const auto = await post('/automations', {
      trigger: { kind: 'event', event: 'media.created' },
      workflow: [{ kind: 'image', width: 8 }],
      status: 'paused',
    });
    assert.equal(auto.json.status, 'paused');
    assert.equal((await get('/automations')).json.length, 1);
    const events = await get('/events?type=task.created');
    assert.ok(events.json.length >= 1);
    assert.equal((await get(`/events/${events.json[0].id}`)).json.object, 'event');

    const hook = await post('/webhooks', { url: origin.url('/hook'), events: ['*'] });
    assert.equal(hook.status, 201);
    assert.match(hook.json.secret, /^whsec_/);
    assert.ok(Array.isArray((await get(`/webhooks/${hook.json.id}/deliveries`)).json));
    assert.equal((await get('/project')).json.object, 'project');
    assert.equal((await get('/project/webhook-secret')).json.object, 'webhook_secret');
    const sig = await post('/signatures', { filename: 'a.png', folder: 'x' });
    assert.equal(sig.status, 201);
    assert.match(sig.json.url, /signature=/);
  });
});

describe('fields both generations share', () => {
  it('omits optional fields without a value instead of sending null', async () => {
    const media = await t.call('POST', '/media', { key, body: {} });
    assert.equal(media.status, 201);
    for (const f of ['title', 'alt', 'kind', 'background']) assert.ok(!(f in media.json.data), `${f} is omitted`);
    const auto = await t.call('POST', '/automations', {
      key,
      body: { trigger: { kind: 'event', event: 'media.created' }, workflow: [{ kind: 'image', width: 8 }] },
    });
    assert.ok(!('name' in auto.json.data) && !('description' in auto.json.data));
    // What SPEC shows as null stays null: a task's output before completion, prev on page 1.
    const task = await t.call('POST', '/tasks', {
      key,
      body: { kind: 'ingest', url: origin.url('/fixtures/image-png') },
    });
    assert.equal(task.json.data.output, null);
    const list = await t.call('GET', '/media', { key });
    assert.equal(list.json.links.prev, null);
    assert.equal(list.json.error, null);
  });
});
