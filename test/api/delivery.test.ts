import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { request } from 'undici';
import { fixture } from '../helpers/fixtures.js';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let origin: Origin;
let key: string;
let projectId: string;
let otherKey: string;
let otherProject: string;
let video: Buffer; // the fixture's bytes, read from disk
let fileUrl: string;
let etag: string;

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Like t.call, but keeps the body as bytes. */
async function raw(
  method: string,
  url: string,
  opts: { headers?: Record<string, string>; body?: Buffer } = {},
): Promise<RawResponse> {
  const res = await request(url, {
    method: method as 'GET',
    headers: opts.headers,
    body: opts.body,
    dispatcher: t.agent,
  });
  const body = Buffer.from(await res.body.arrayBuffer());
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers))
    if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  return { status: res.statusCode, headers, body };
}
const json = (r: RawResponse) => JSON.parse(r.body.toString('utf8'));

const secretOf = async (project: string) =>
  (
    await t.server.runtime.deps.db
      .selectFrom('projects')
      .select('signing_secret')
      .where('id', '=', project)
      .executeTakeFirstOrThrow()
  ).signing_secret;
/** The scheme of reference.md Decisions 9, computed here without the service's code. */
const hmac = (secret: string, p: string, expiry: number, method: string) =>
  createHmac('sha256', secret).update(`${p}?expiry=${expiry}&method=${method}`).digest('base64url');
const nowSec = () => Math.floor(Date.now() / 1000);
const signedQuery = (secret: string, p: string, expiry: number, method: string, signAs = method) =>
  `?expiry=${expiry}&method=${method}&signature=${hmac(secret, p, expiry, signAs)}`;

/** Every file left under <dataDir>/tmp (the per-process scratch directories). */
const tmpFiles = async () =>
  (await fs.readdir(path.join(t.dataDir, 'tmp'), { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => e.name);

before(async () => {
  origin = await startOrigin();
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host });
  ({ key, project_id: projectId } = await t.key('acme', 'prod'));
  ({ key: otherKey, project_id: otherProject } = await t.key('acme', 'staging'));
  video = await fs.readFile(await fixture('video-mp4'));
  const res = await t.call('POST', '/files', {
    key,
    body: { url: origin.url('/fixtures/video-mp4'), folder: 'clips', filename: 'a.mp4' },
  });
  assert.equal(res.status, 201, res.text);
  fileUrl = res.json.data.url;
  assert.equal(fileUrl, `${t.base}/d/${projectId}/clips/a.mp4`);
});
after(async () => {
  await t.stop();
  await origin.close();
});

describe('delivery', () => {
  it('serves the stored bytes with type, length and caching headers; HEAD sends the headers only', async () => {
    const res = await raw('GET', fileUrl);
    assert.equal(res.status, 200);
    assert.ok(res.body.equals(video), 'body equals the original fixture');
    assert.equal(res.headers['content-type'], 'video/mp4');
    assert.equal(res.headers['content-length'], String(video.length));
    assert.match(res.headers.etag!, /^"file_[A-Za-z0-9]+"$/);
    etag = res.headers.etag!;
    assert.ok(!Number.isNaN(Date.parse(res.headers['last-modified']!)));
    assert.equal(res.headers['cache-control'], 'public, max-age=3600');
    assert.equal(res.headers['accept-ranges'], 'bytes');

    const head = await raw('HEAD', fileUrl);
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal(head.headers['content-length'], String(video.length));
    assert.equal(head.headers['content-type'], 'video/mp4');
    assert.equal(head.headers.etag, etag);
  });

  it('serves single ranges as 206 with Content-Range and the matching slice', async () => {
    const size = video.length;
    const cases: Array<[string, number, number]> = [
      ['bytes=0-99', 0, 99],
      ['bytes=-500', size - 500, size - 1],
      [`bytes=${size - 1000}-`, size - 1000, size - 1],
      [`bytes=${size - 10}-${size + 100}`, size - 10, size - 1], // end past the file is clamped
      [`bytes=-${size + 5}`, 0, size - 1], // suffix longer than the file is the whole file
    ];
    for (const [range, start, end] of cases) {
      const res = await raw('GET', fileUrl, { headers: { range } });
      assert.equal(res.status, 206, range);
      assert.equal(res.headers['content-range'], `bytes ${start}-${end}/${size}`, range);
      assert.equal(res.headers['content-length'], String(end - start + 1), range);
      assert.ok(res.body.equals(video.subarray(start, end + 1)), `${range}: bytes differ`);
    }
    const head = await raw('HEAD', fileUrl, { headers: { range: 'bytes=10-19' } });
    assert.equal(head.status, 206);
    assert.equal(head.headers['content-length'], '10');
    assert.equal(head.body.length, 0);
  });

  it('answers 416 with bytes */size for an unsatisfiable range, 200 for multiple ranges', async () => {
    for (const range of [`bytes=${video.length}-`, `bytes=${video.length + 5}-${video.length + 9}`, 'bytes=-0']) {
      const res = await raw('GET', fileUrl, { headers: { range } });
      assert.equal(res.status, 416, range);
      assert.equal(res.headers['content-range'], `bytes */${video.length}`);
      assert.equal(json(res).error.code, 'range_not_satisfiable');
    }
    const multi = await raw('GET', fileUrl, { headers: { range: 'bytes=0-1,5-6' } });
    assert.equal(multi.status, 200);
    assert.ok(multi.body.equals(video));
  });

  it('answers If-None-Match with 304, and If-Range only honours the current ETag', async () => {
    for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
      const res = await raw('GET', fileUrl, { headers: { 'if-none-match': inm } });
      assert.equal(res.status, 304, inm);
      assert.equal(res.body.length, 0);
      assert.equal(res.headers.etag, etag);
    }
    assert.equal((await raw('GET', fileUrl, { headers: { 'if-none-match': '"file_other"' } })).status, 200);
    const stale = await raw('GET', fileUrl, { headers: { range: 'bytes=0-9', 'if-range': '"file_old"' } });
    assert.equal(stale.status, 200);
    assert.equal(stale.body.length, video.length);
    assert.equal((await raw('GET', fileUrl, { headers: { range: 'bytes=0-9', 'if-range': etag } })).status, 206);
  });

  it('answers unknown paths and projects with a 404 envelope', async () => {
    for (const p of [
      `/d/${projectId}/clips/missing.mp4`,
      `/d/${projectId}/a.mp4`,
      `/d/prj_doesnotexist/clips/a.mp4`,
      `/d/${otherProject}/clips/a.mp4`,
      `/d/${projectId}`,
      `/d/${projectId}/..%2Fclips/a.mp4`,
      `/d/${projectId}/clips%2Fa.mp4`,
    ]) {
      const res = await raw('GET', `${t.base}${p}`);
      assert.equal(res.status, 404, p);
      const body = json(res);
      assert.equal(body.error.code, 'not_found', p);
      assert.equal(body.meta.type, 'error');
      assert.equal(body.data, null);
    }
  });
});

describe('signed URLs', () => {
  it('POST /signatures returns a URL signed with the project secret', async () => {
    const before = nowSec();
    const res = await t.call('POST', '/signatures', { key, body: { filename: 'a.mp4', folder: '/clips/' } });
    assert.equal(res.status, 201, res.text);
    const s = res.json.data;
    assert.deepEqual([s.domain, s.folder, s.filename, s.method], [new URL(t.base).host, 'clips', 'a.mp4', 'get']);
    assert.ok(s.expiry >= before + 3600 && s.expiry <= nowSec() + 3600, `default expiry ${s.expiry}`);
    assert.equal(s.signature, hmac(await secretOf(projectId), 'clips/a.mp4', s.expiry, 'get'));
    assert.doesNotMatch(s.signature, /[=+/]/);
    assert.equal(s.url, `${fileUrl}?expiry=${s.expiry}&method=get&signature=${s.signature}`);

    const put = (
      await t.call('POST', '/signatures', { key, body: { filename: 'x.png', method: 'put', expiry: before + 60 } })
    ).json.data;
    assert.equal(put.folder, '');
    assert.equal(put.expiry, before + 60);
    assert.equal(put.signature, hmac(await secretOf(projectId), 'x.png', before + 60, 'put'));
  });

  it('validates expiry, method and filename', async () => {
    const tooLate = nowSec() + 7 * 86400 + 60;
    for (const body of [
      { filename: 'a.mp4', expiry: nowSec() - 5 },
      { filename: 'a.mp4', expiry: tooLate },
      { filename: 'a.mp4', method: 'post' },
      { folder: 'clips' },
      { filename: '../a.mp4' },
    ]) {
      const res = await t.call('POST', '/signatures', { key, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.json.error.code, 'validation_failed');
    }
    assert.equal((await t.call('POST', '/signatures', { body: { filename: 'a.mp4' } })).status, 401);
  });

  it('with require_signed_delivery, only valid, unexpired GET signatures for that path are served', async () => {
    const k = await t.key('acme', 'private');
    const src = await t.call('POST', '/files', {
      key: k.key,
      body: { url: origin.url('/fixtures/video-mp4'), folder: 'v', filename: 'p.mp4' },
    });
    assert.equal(src.status, 201, src.text);
    const url = src.json.data.url as string;
    const patched = await t.call('PATCH', '/project', { key: k.key, body: { require_signed_delivery: true } });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json.data.require_signed_delivery, true);
    assert.equal((await t.call('GET', '/project', { key: k.key })).json.data.require_signed_delivery, true);

    const unsigned = await raw('GET', url);
    assert.equal(unsigned.status, 403);
    assert.equal(json(unsigned).error.code, 'forbidden');
    assert.equal((await raw('HEAD', url)).status, 403);

    const s = (await t.call('POST', '/signatures', { key: k.key, body: { folder: 'v', filename: 'p.mp4' } })).json.data;
    const ok = await raw('GET', s.url);
    assert.equal(ok.status, 200);
    assert.ok(ok.body.equals(video));
    assert.equal(ok.headers['cache-control'], 'private, max-age=300');
    const part = await raw('GET', s.url, { headers: { range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.ok(part.body.equals(video.subarray(100, 200)));

    const secret = await secretOf(k.project_id);
    const future = nowSec() + 600;
    assert.equal(
      (await raw('GET', url + signedQuery(secret, 'v/p.mp4', future, 'get'))).status,
      200,
      'a hand-made signature is accepted',
    );
    const expired = await raw('GET', url + signedQuery(secret, 'v/p.mp4', nowSec() - 30, 'get'));
    assert.equal(expired.status, 403);
    assert.equal(json(expired).error.code, 'signature_expired');

    const tampered = s.signature.slice(0, -1) + (s.signature.endsWith('A') ? 'B' : 'A');
    const invalid = [
      `${url}?expiry=${s.expiry}&method=get&signature=${tampered}`,
      `${url}?expiry=${s.expiry + 1}&method=get&signature=${s.signature}`,
      `${url}?expiry=${s.expiry}&method=get&signature=`,
      `${t.base}/d/${k.project_id}/v/other.mp4?expiry=${s.expiry}&method=get&signature=${s.signature}`,
      `${t.base}/d/${k.project_id}/p.mp4?expiry=${s.expiry}&method=get&signature=${s.signature}`,
      url + signedQuery(secret, 'v/p.mp4', future, 'put'), // a PUT signature used for GET
      url + signedQuery(secret, 'v/p.mp4', future, 'get', 'put'),
      url + signedQuery(await secretOf(projectId), 'v/p.mp4', future, 'get'), // another project's secret
    ];
    for (const u of invalid) {
      const res = await raw('GET', u);
      assert.equal(res.status, 403, u);
      assert.equal(json(res).error.code, 'signature_invalid', u);
    }
    assert.equal(
      (await t.call('PATCH', '/project', { key: k.key, body: { require_signed_delivery: false } })).json.data
        .require_signed_delivery,
      false,
    );
    assert.equal((await raw('GET', url)).status, 200, 'public again once the flag is cleared');
  });
});

describe('uploads by PUT', () => {
  it('a signed PUT URL stores the bytes as a probed file with a new media', async () => {
    const png = await fs.readFile(await fixture('image-png'));
    const s = (
      await t.call('POST', '/signatures', { key, body: { folder: 'up', filename: 'blue.png', method: 'put' } })
    ).json.data;
    const res = await raw('PUT', s.url, { body: png, headers: { 'content-type': 'image/png' } });
    assert.equal(res.status, 201, res.body.toString());
    const f = json(res).data;
    assert.match(f.id, /^file_/);
    assert.deepEqual([f.kind, f.type, f.width, f.height, f.filesize], ['image', 'image/png', 64, 48, png.length]);
    assert.deepEqual([f.folder, f.filename], ['up', 'blue.png']);
    assert.equal(f.url, `${t.base}/d/${projectId}/up/blue.png`);
    assert.equal(json(res).meta.project_id, projectId);

    const events = await t.server.runtime.deps.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('project_id', '=', projectId)
      .execute();
    assert.ok(
      events.some((e) => e.type === 'media.created' && JSON.parse(e.data).id === f.media_id),
      'media.created recorded',
    );
    assert.equal((await t.call('GET', `/media/${f.media_id}`, { key })).json.data.urls.original, f.url);

    const got = await raw('GET', f.url);
    assert.equal(got.status, 200);
    assert.ok(got.body.equals(png));
    const again = await raw('PUT', s.url, { body: png });
    assert.equal(again.status, 409);
    assert.equal(json(again).error.code, 'file_conflict');
  });

  it('accepts an API key of the project, refuses other keys and unsigned requests', async () => {
    const png = await fs.readFile(await fixture('image-png'));
    const url = `${t.base}/d/${projectId}/keyed/k.png`;
    for (const headers of [{ authorization: `Bearer ${otherKey}` }, { authorization: 'Bearer mdk_nope' }, {}] as Record<
      string,
      string
    >[]) {
      const res = await raw('PUT', url, { body: png, headers });
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.equal(json(res).error.code, 'unauthorized');
    }
    const res = await raw('PUT', url, { body: png, headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 201, res.body.toString());
    assert.equal(json(res).data.kind, 'image');
    assert.ok((await raw('GET', url)).body.equals(png));
  });

  it('refuses non-media, GET and expired signatures, and leaves no temp files', async () => {
    const secret = await secretOf(projectId);
    const noise = await fs.readFile(await fixture('random-bytes'));
    const png = await fs.readFile(await fixture('image-png'));
    const url = `${t.base}/d/${projectId}/up/noise.bin`;
    const bad = await raw('PUT', url + signedQuery(secret, 'up/noise.bin', nowSec() + 60, 'put'), { body: noise });
    assert.equal(bad.status, 422);
    assert.equal(json(bad).error.code, 'media_unsupported');
    assert.equal((await raw('GET', url)).status, 404, 'nothing stored');

    const target = `${t.base}/d/${projectId}/up/g.png`;
    const asGet = await raw('PUT', target + signedQuery(secret, 'up/g.png', nowSec() + 60, 'get'), { body: png });
    assert.equal(asGet.status, 403);
    assert.equal(json(asGet).error.code, 'signature_invalid');
    const expired = await raw('PUT', target + signedQuery(secret, 'up/g.png', nowSec() - 30, 'put'), { body: png });
    assert.equal(expired.status, 403);
    assert.equal(json(expired).error.code, 'signature_expired');
    const empty = await raw('PUT', target + signedQuery(secret, 'up/g.png', nowSec() + 60, 'put'), {
      body: Buffer.alloc(0),
    });
    assert.equal(empty.status, 400);
    assert.equal((await raw('GET', target)).status, 404);
    assert.deepEqual(await tmpFiles(), []);
  });

  it('stops oversized and aborted uploads without keeping bytes', async () => {
    // Lowered on the running server (read per request) rather than paying for a second server's new CA.
    const limits = t.server.runtime.deps.config.limits;
    const saved = limits.maxFileBytes;
    limits.maxFileBytes = 100_000;
    try {
      const url = `${t.base}/d/${projectId}/big.bin`;
      const put = (body: Buffer | Readable, signal?: AbortSignal) =>
        request(url, { method: 'PUT', body, signal, headers: { authorization: `Bearer ${key}` }, dispatcher: t.agent });
      const declared = await put(Buffer.alloc(100_001));
      assert.equal(declared.statusCode, 413);
      assert.equal(((await declared.body.json()) as any).error.code, 'payload_too_large');
      const chunked = await put(
        Readable.from(
          (async function* () {
            for (let i = 0; i < 20; i++) yield Buffer.alloc(10_000, i);
          })(),
        ),
      );
      assert.equal(chunked.statusCode, 413, 'a body without Content-Length is counted as it arrives');
      assert.equal(chunked.headers.connection, 'close', 'a half-read connection is not kept alive');
      await chunked.body.dump();
      const abort = new AbortController();
      const slow = Readable.from(
        (async function* () {
          yield Buffer.alloc(5000, 1);
          await setTimeout(200);
          abort.abort();
          await setTimeout(200);
        })(),
      );
      await assert.rejects(put(slow, abort.signal));
      for (let i = 0; i < 40 && (await tmpFiles()).length > 0; i++) await setTimeout(50); // the server notices the abort asynchronously
      assert.deepEqual(await tmpFiles(), []);
      assert.equal((await raw('GET', url)).status, 404);
    } finally {
      limits.maxFileBytes = saved;
    }
  });
});
