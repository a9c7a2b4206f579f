import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import sharp, { type Sharp } from 'sharp';
import { request } from 'undici';
import { fixture, type FixtureName } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/paths.js';
import { startS3, type LocalS3 } from '../helpers/s3.js';
import { invite, setUpOwner, write } from '../helpers/people.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// On-the-fly image URLs (issue 24, docs/image-urls.md), against a real server: signatures, options
// as sharp itself applies them, poster frames as FFmpeg extracts them, the cache and its budget.

const run = promisify(execFile);
let t: TestServer;

interface Project {
  key: string;
  id: string;
  imk: string;
}
let a: Project;
let b: Project;
const files: Record<string, string> = {};

interface Raw {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

async function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  const res = await request(url.startsWith('https://') ? url : `${t.base}${url}`, {
    method: method as 'GET',
    headers,
    dispatcher: t.agent,
  });
  const body = Buffer.from(await res.body.arrayBuffer());
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
  return { status: res.statusCode, headers: flat, body };
}
const json = (r: Raw) => JSON.parse(r.body.toString('utf8'));

/** The documented scheme, computed here without the service's code. */
const sign = (key: string, signedPath: string) => createHmac('sha256', key).update(signedPath).digest('base64url');
const imgUrl = (p: Project, options: string, file: string, key = p.imk) =>
  `/img/${p.id}/${sign(key, `/${options}/${file}`)}/${options}/${file}`;

async function project(org: string, name: string): Promise<Project> {
  const k = await t.key(org, name);
  const revealed = await t.call('POST', '/project/image-url-key/reveal', { key: k.key });
  assert.equal(revealed.status, 200, revealed.text);
  return { key: k.key, id: k.project_id, imk: revealed.json.data.key };
}

async function upload(p: Project, name: FixtureName, filename: string): Promise<string> {
  const bytes = await fs.readFile(await fixture(name));
  const res = await request(`${t.base}/d/${p.id}/${filename}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${p.key}` },
    body: bytes,
    dispatcher: t.agent,
  });
  const body = (await res.body.json()) as { data: { id: string } };
  assert.equal(res.statusCode, 201);
  return body.data.id;
}

async function results(): Promise<Record<string, number>> {
  const text = (await get('/metrics')).body.toString();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^mediad_image_url_results_total\{result="(\w+)"\} (\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}
const delta = (before: Record<string, number>, after: Record<string, number>, k: string) =>
  (after[k] ?? 0) - (before[k] ?? 0);

/** Mean absolute difference of two images' pixels at one size (0 = identical). */
async function pixelDiff(x: Buffer, y: Buffer, w = 64, h = 48): Promise<number> {
  const raw = (img: Buffer) => sharp(img).resize(w, h, { fit: 'fill' }).removeAlpha().raw().toBuffer();
  const [p, q] = await Promise.all([raw(x), raw(y)]);
  let sum = 0;
  for (let i = 0; i < p.length; i++) sum += Math.abs(p[i]! - q[i]!);
  return sum / p.length;
}

before(async () => {
  t = await startTestServer({
    MEDIAD_IMAGE_URL_CACHE_BYTES: '60000',
    MEDIAD_IMAGE_URL_MISSES_PER_MINUTE: '40',
    MEDIAD_IMAGE_URL_MAX_WIDTH: '2000',
  });
  a = await project('imgurl', 'a');
  b = await project('imgurl', 'b');
  [files.jpeg, files.png, files.video, files.audio, files.gif] = await Promise.all([
    upload(a, 'image-jpeg', 'photo.jpg'),
    upload(a, 'image-png', 'small.png'),
    upload(a, 'video-mp4', 'clip.mp4'),
    upload(a, 'audio-mp3', 'sound.mp3'),
    upload(a, 'image-gif-animated', 'anim.gif'),
  ]);
  files.bJpeg = await upload(b, 'image-jpeg', 'photo.jpg');
});
after(() => t?.stop());

describe('image URL key and signing', () => {
  it('keeps the key for owners: GET shows a prefix only, reveal shows the key, a read-only key may not', async () => {
    const meta = await t.call('GET', '/project/image-url-key', { key: a.key });
    assert.equal(meta.status, 200);
    assert.equal(meta.json.data.key, undefined);
    assert.ok(a.imk.startsWith(meta.json.data.prefix.replace('…', '')));
    assert.match(a.imk, /^imk_[A-Za-z0-9_-]{43}$/);
    const reader = await t.call('POST', '/keys', { key: a.key, body: { name: 'reader', scopes: ['files:read'] } });
    assert.equal(reader.status, 201, reader.text);
    const denied = await t.call('POST', '/project/image-url-key/reveal', { key: reader.json.data.key });
    assert.equal(denied.status, 403);
  });

  it('lets whoever may read files sign a URL (POST /image-urls): a files:read key and a viewer, not a tasks key', async () => {
    const scoped = async (scopes: string[]) =>
      (await t.call('POST', '/keys', { key: a.key, body: { name: scopes.join(' '), scopes } })).json.data.key as string;
    const body = { file_id: files.jpeg, options: { width: 64, format: 'png' } };
    const reader = await t.call('POST', '/image-urls', { key: await scoped(['files:read']), body });
    assert.equal(reader.status, 200, reader.text);
    assert.equal((await get(reader.json.data.url)).status, 200);
    const tasks = await t.call('POST', '/image-urls', { key: await scoped(['tasks:write']), body });
    assert.equal(tasks.status, 403, tasks.text);
    assert.equal(tasks.json.error.code, 'insufficient_scope');
    // Reading does not widen to the family's writes: presets stay with who may change settings.
    const presetByReader = await t.call('POST', '/image-presets', {
      key: await scoped(['files:read', 'project:read']),
      body: { name: 'nope', options: { width: 10 } },
    });
    assert.equal(presetByReader.status, 403);

    // A viewer's session (the web application's): signs, with the CSRF token every session POST sends.
    const owner = await setUpOwner(t, 'imgurl-owner@example.com', 'Img');
    const ownerProject: Project = { key: owner.key, id: owner.projectId, imk: '' };
    const photo = await upload(ownerProject, 'image-jpeg', 'viewer.jpg');
    const viewer = await invite(t, owner.session, owner.orgId, 'imgurl-viewer@example.com', 'viewer');
    const signed = await t.call('POST', '/image-urls', {
      ...write(t, viewer.session, { file_id: photo, options: { width: 48, format: 'webp' } }, owner.projectId),
    });
    assert.equal(signed.status, 200, signed.text);
    const img = await get(signed.json.data.url);
    assert.equal(img.status, 200);
    assert.equal((await sharp(img.body).metadata()).width, 48);
    const writeAsViewer = await t.call('POST', '/image-presets', {
      ...write(t, viewer.session, { name: 'v', options: { width: 10 } }, owner.projectId),
    });
    assert.equal(writeAsViewer.status, 403);
    assert.equal(writeAsViewer.json.error.code, 'insufficient_role');
  });

  it('serves a URL signed as documented, and POST /image-urls signs the same way', async () => {
    const res = await get(imgUrl(a, 'width:200,fit:inside,format:webp', files.jpeg!));
    assert.equal(res.status, 200, res.body.toString());
    assert.equal(res.headers['content-type'], 'image/webp');
    assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
    const meta = await sharp(res.body).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 200, 150]);
    const signed = await t.call('POST', '/image-urls', {
      key: a.key,
      body: { file_id: files.jpeg, options: { width: 200, fit: 'inside', format: 'webp' }, widths: [100, 300] },
    });
    assert.equal(signed.status, 200, signed.text);
    assert.equal(signed.json.data.url, `${t.base}${imgUrl(a, 'width:200,fit:inside,format:webp', files.jpeg!)}`);
    const srcset = signed.json.data.srcset.split(', ').map((s: string) => s.split(' '));
    assert.deepEqual(
      srcset.map((s: string[]) => s[1]),
      ['100w', '300w'],
    );
    const w300 = await get(srcset[1][0]);
    assert.equal((await sharp(w300.body).metadata()).width, 300);
    // The bare generation answers the object itself.
    const bare = await t.call('POST', '/image-urls', {
      key: a.key,
      headers: { 'accept-version': '2025-08-20' },
      body: { file_id: files.jpeg, options: { width: 200, fit: 'inside', format: 'webp' } },
    });
    assert.equal(bare.json.object, 'image_url');
    assert.equal(bare.json.url, signed.json.data.url);
    const other = await t.call('POST', '/image-urls', { key: a.key, body: { file_id: files.bJpeg } });
    assert.equal(other.status, 404);
    const bad = await t.call('POST', '/image-urls', {
      key: a.key,
      body: { file_id: files.jpeg, options: { width: 0 } },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.details[0].field, 'options.width');
  });

  it('refuses tampered, unsigned and wrongly signed URLs with 403 and computes nothing', async () => {
    const opts = 'width:120,format:png';
    const good = imgUrl(a, opts, files.jpeg!);
    const sig = good.split('/')[3]!;
    const flip = (s: string) => (s[5] === 'A' ? `${s.slice(0, 5)}B${s.slice(6)}` : `${s.slice(0, 5)}A${s.slice(6)}`);
    const before = await results();
    const cases = [
      `/img/${a.id}/${sig}/width:121,format:png/${files.jpeg}`, // options changed
      `/img/${a.id}/${sig}/${opts}/${files.png}`, // file changed
      `/img/${a.id}/${sig}/${opts}/${files.jpeg}.png`, // extension added
      `/img/${a.id}/${flip(sig)}/${opts}/${files.jpeg}`, // one character of the signature
      `/img/${a.id}/${sig.slice(0, 42)}/${opts}/${files.jpeg}`, // wrong length
      `/img/${a.id}/${sig.slice(0, 42)}+/${opts}/${files.jpeg}`, // wrong alphabet
      `/img/${a.id}/_/${opts}/${files.jpeg}`, // unsigned
      imgUrl(a, opts, files.jpeg!, b.imk), // another project's key
    ];
    for (const url of cases) {
      const res = await get(url);
      assert.equal(res.status, 403, url);
      assert.equal(json(res).error.code, 'signature_invalid', url);
    }
    const after = await results();
    assert.equal(delta(before, after, 'miss'), 0);
    assert.equal(delta(before, after, 'rejected'), cases.length);
  });

  it('answers 404 for another project’s file, 415 for audio, 400 naming a bad option', async () => {
    assert.equal((await get(imgUrl(a, 'width:100', files.bJpeg!))).status, 404);
    assert.equal((await get(`/img/proj_nope/${'A'.repeat(43)}/width:100/${files.jpeg}`)).status, 404);
    const audio = await get(imgUrl(a, 'width:100', files.audio!));
    assert.equal(audio.status, 415);
    for (const [opts, field] of [
      ['width:0', 'width'],
      ['width:abc', 'width'],
      ['fit:squash', 'fit'],
      ['dpr:5', 'dpr'],
      ['rotate:45', 'rotate'],
      ['colour:red', 'colour'],
      ['width:100,w:200', 'width'],
      ['width:1500,dpr:2', 'width'],
    ]) {
      const res = await get(imgUrl(a, opts!, files.jpeg!));
      assert.equal(res.status, 400, opts);
      assert.equal(json(res).error.details[0].field, field, opts);
    }
  });

  it('answers 422 media_unsupported for a source whose bytes do not decode', async () => {
    const p = await project('imgurl', 'corrupt');
    const file = await upload(p, 'image-png', 'c.png');
    const deps = t.server.runtime.deps;
    const row = await deps.db.selectFrom('files').select('blob_key').where('id', '=', file).executeTakeFirstOrThrow();
    const local = deps.blobs.localPath(row.blob_key);
    assert.ok(local, 'the disk store');
    // The stored bytes break after the header (storage damaged since the upload).
    const bytes = await fs.readFile(local);
    await fs.writeFile(local, Buffer.concat([bytes.subarray(0, 40), Buffer.alloc(bytes.length - 40, 0x5a)]));
    const res = await get(imgUrl(p, 'width:10', file));
    assert.equal(res.status, 422);
    assert.equal(json(res).error.code, 'media_unsupported');
  });

  it('keeps the previous key working for 24 hours after a rotation, then refuses it', async () => {
    const p = await project('imgurl', 'rotate');
    const file = await upload(p, 'image-png', 'r.png');
    const old = imgUrl(p, 'width:10', file);
    const rotated = await t.call('POST', '/project/image-url-key/rotate', { key: p.key });
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.json.data.key, p.imk);
    assert.ok(rotated.json.data.previous_key_expires);
    assert.equal((await get(old)).status, 200);
    assert.equal((await get(imgUrl(p, 'width:11', file, rotated.json.data.key))).status, 200);
    // The overlap has passed.
    await t.server.runtime.deps.db
      .updateTable('image_url_settings')
      .set({ key_rotated: new Date(Date.now() - 25 * 3600_000).toISOString() })
      .where('project_id', '=', p.id)
      .execute();
    // Changed behind the server's back (as another process would): its copy of the settings is
    // read again within 5 s (services/media/image-url-keys.ts).
    const since = Date.now();
    let status = (await get(old)).status;
    while (status === 200 && Date.now() - since < 7_000) {
      await new Promise((r) => setTimeout(r, 250));
      status = (await get(old)).status;
    }
    assert.equal(status, 403);
  });
});

describe('image URL options, as sharp applies them', () => {
  it('resizes with each fit, dpr, rotate, and the extension or format', async () => {
    const dims = async (opts: string, file = files.jpeg!) => {
      const res = await get(imgUrl(a, opts, file));
      assert.equal(res.status, 200, `${opts}: ${res.body.toString().slice(0, 200)}`);
      const m = await sharp(res.body).metadata();
      return [m.format, m.width, m.height];
    };
    assert.deepEqual(await dims('width:160,height:160,fit:cover,format:jpeg'), ['jpeg', 160, 160]);
    assert.deepEqual(await dims('width:160,height:160,fit:inside,format:png'), ['png', 160, 120]);
    assert.deepEqual(await dims('width:160,height:160,fit:outside,format:webp'), ['webp', 213, 160]);
    assert.deepEqual(await dims('width:160,height:160,fit:fill,format:avif'), ['heif', 160, 160]);
    assert.deepEqual(await dims('width:80,height:60,fit:contain,dpr:2,format:gif'), ['gif', 160, 120]);
    assert.deepEqual(await dims('w:100,rotate:90,f:jpg'), ['jpeg', 100, 133]);
    // A smaller source keeps its size unless enlarge:1.
    assert.deepEqual(await dims('width:128,format:png', files.png!), ['png', 64, 48]);
    assert.deepEqual(await dims('width:128,format:png,enlarge:1', files.png!), ['png', 128, 96]);
    const ext = await get(imgUrl(a, 'width:50', `${files.jpeg}.png`));
    assert.equal(ext.headers['content-type'], 'image/png');
    // The extension and format disagree.
    assert.equal((await get(imgUrl(a, 'format:webp', `${files.jpeg}.png`))).status, 400);
  });

  it('matches sharp’s own output for blur, sharpen, attention crop, background and quality', async () => {
    const source = await fs.readFile(await fixture('image-jpeg'));
    const cases: [string, (s: Sharp) => Sharp][] = [
      ['width:120,height:90,blur:3,format:png', (s) => s.resize(120, 90).blur(3)],
      ['width:120,height:90,sharpen:2,format:png', (s) => s.resize(120, 90).sharpen({ sigma: 2 })],
      [
        'width:60,height:120,position:attention,format:png',
        (s) => s.resize(60, 120, { fit: 'cover', position: sharp.strategy.attention }),
      ],
      ['width:60,height:120,position:left,format:png', (s) => s.resize(60, 120, { fit: 'cover', position: 'left' })],
    ];
    for (const [opts, own] of cases) {
      const ours = (await get(imgUrl(a, opts, files.jpeg!))).body;
      const theirs = await own(sharp(source)).png().toBuffer();
      const [w, h] = [(await sharp(ours).metadata()).width!, (await sharp(ours).metadata()).height!];
      assert.ok((await pixelDiff(ours, theirs, w, h)) < 0.5, opts);
    }
    // An attention crop differs from a left crop of the same box (the check above can fail).
    const att = (await get(imgUrl(a, 'width:60,height:120,position:attention,format:png', files.jpeg!))).body;
    const left = (await get(imgUrl(a, 'width:60,height:120,position:left,format:png', files.jpeg!))).body;
    assert.ok((await pixelDiff(att, left, 60, 120)) > 1);
    const padded = (await get(imgUrl(a, 'width:100,height:100,fit:contain,background:ff0000,format:png', files.jpeg!)))
      .body;
    const { data } = await sharp(padded).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([...data.subarray(0, 3)], [255, 0, 0], 'padding is the background');
    const low = (await get(imgUrl(a, 'width:300,quality:10,format:jpeg', files.jpeg!))).body.length;
    const high = (await get(imgUrl(a, 'width:300,quality:95,format:jpeg', files.jpeg!))).body.length;
    assert.ok(low < high / 2, `${low} vs ${high}`);
  });

  it('format:auto follows Accept (AVIF, WebP, neither) with Vary: Accept', async () => {
    const url = imgUrl(a, 'width:64,format:auto', files.jpeg!);
    const of = async (accept: string) => {
      const res = await get(url, { accept });
      assert.equal(res.headers.vary, 'Accept');
      return [res.headers['content-type'], (await sharp(res.body).metadata()).format];
    };
    assert.deepEqual(await of('image/avif,image/webp,*/*'), ['image/avif', 'heif']);
    assert.deepEqual(await of('image/webp,*/*'), ['image/webp', 'webp']);
    assert.deepEqual(await of('*/*'), ['image/jpeg', 'jpeg']);
  });

  it('takes a video’s poster frame at `time` as FFmpeg extracts it; past the end is 422 naming time', async () => {
    const res = await get(imgUrl(a, 'time:1.5,format:png', files.video!));
    assert.equal(res.status, 200, res.body.toString());
    assert.deepEqual([(await sharp(res.body).metadata()).width, (await sharp(res.body).metadata()).height], [320, 240]);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'imgurl-'));
    try {
      const frame = async (at: string) => {
        const out = path.join(dir, `f${at}.png`);
        await run('ffmpeg', ['-v', 'error', '-ss', at, '-i', await fixture('video-mp4'), '-frames:v', '1', out]);
        return fs.readFile(out);
      };
      const same = await pixelDiff(res.body, await frame('1.5'), 320, 240);
      const other = await pixelDiff(res.body, await frame('0.2'), 320, 240);
      assert.ok(same < 2, `same frame: ${same}`);
      assert.ok(other > same * 2 && other > 2, `another frame: ${other}`);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
    const past = await get(imgUrl(a, 'time:5', files.video!));
    assert.equal(past.status, 422);
    assert.equal(json(past).error.code, 'invalid_for_source');
    assert.equal(json(past).error.details[0].field, 'time');
    // An animated GIF: its frame at a time, or all frames as GIF.
    const still = await sharp((await get(imgUrl(a, 'time:0.5,format:png', files.gif!))).body).metadata();
    assert.equal(still.pages ?? 1, 1);
    const anim = await sharp((await get(imgUrl(a, 'width:80', files.gif!))).body).metadata();
    assert.ok((anim.pages ?? 1) > 1);
  });
});

describe('image URL cache', () => {
  it('computes once: a hit after the first request, 304, Range, identical concurrent misses share one computation', async () => {
    const url = imgUrl(a, 'width:90,format:webp', files.jpeg!);
    const m0 = await results();
    const first = await get(url);
    assert.equal(first.status, 200);
    // Stored after the answer: wait for the row.
    const db = t.server.runtime.deps.db;
    const id = first.headers.etag!.replaceAll('"', '');
    for (
      let i = 0;
      i < 100 && !(await db.selectFrom('image_derivatives').select('id').where('id', '=', id).executeTakeFirst());
      i++
    )
      await new Promise((r) => setTimeout(r, 20));
    const second = await get(url);
    const m1 = await results();
    assert.equal(delta(m0, m1, 'miss'), 1, 'computed once');
    // A miss says where its time went (Server-Timing); a hit has nothing to say.
    const timing = /^cache;desc=miss, wait;dur=(\d+\.\d\d), render;dur=(\d+\.\d\d), total;dur=(\d+\.\d\d)$/.exec(
      String(first.headers['server-timing']),
    );
    assert.ok(timing, String(first.headers['server-timing']));
    assert.ok(Number(timing[2]) > 0 && Number(timing[3]) >= Number(timing[1]) + Number(timing[2]), timing[0]);
    assert.equal(second.headers['server-timing'], undefined);
    assert.equal(delta(m0, m1, 'hit'), 1);
    assert.deepEqual(second.body, first.body);
    assert.equal(second.headers.etag, first.headers.etag);
    const head = await get(url, {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-length'], String(first.body.length));
    assert.equal(head.body.length, 0);
    const notModified = await get(url, { 'if-none-match': first.headers.etag! });
    assert.equal(notModified.status, 304);
    const range = await get(url, { range: 'bytes=10-19' });
    assert.equal(range.status, 206);
    assert.equal(range.headers['content-range'], `bytes 10-19/${first.body.length}`);
    assert.deepEqual(range.body, first.body.subarray(10, 20));

    const m2 = await results();
    const burst = await Promise.all(
      Array.from({ length: 6 }, () => get(imgUrl(a, 'width:91,format:webp', files.jpeg!))),
    );
    assert.ok(burst.every((r) => r.status === 200 && r.body.equals(burst[0]!.body)));
    const m3 = await results();
    assert.equal(delta(m2, m3, 'miss'), 1, 'six identical requests, one computation');
    assert.equal(delta(m2, m3, 'miss') + delta(m2, m3, 'coalesced') + delta(m2, m3, 'hit'), 6);
    const usage = await db
      .selectFrom('usage_counters')
      .select(['metric', 'value'])
      .where('project_id', '=', a.id)
      .where('period', '=', 'd')
      .where('metric', 'in', ['image_transformations', 'image_derived_bytes'])
      .execute();
    assert.equal(usage.length, 2);
    const totals = (await t.call('GET', '/usage?range=24h', { key: a.key })).json.data.totals;
    assert.ok(totals.image_transformations >= 2, JSON.stringify(totals));
    assert.ok(totals.image_derived_bytes > 0);
  });

  it('evicts the least recently used results past its byte budget; deleting the file drops its results', async () => {
    const p = await project('imgurl', 'evict');
    const file = await upload(p, 'image-jpeg', 'e.jpg');
    const db = t.server.runtime.deps.db;
    const blobs = t.server.runtime.deps.blobs;
    const settle = async () => {
      await new Promise((r) => setTimeout(r, 150));
    };
    const made = (w: number) => imgUrl(p, `width:${w},format:jpeg,quality:90`, file);
    const m0 = await results();
    const first = await get(made(300));
    assert.equal(first.status, 200);
    await settle();
    for (let w = 360; w <= 600; w += 60) {
      // Every result was served two minutes ago; then the first one is served again (a hit marks it).
      await db
        .updateTable('image_derivatives')
        .set({ last_used: new Date(Date.now() - 120_000).toISOString() })
        .execute();
      assert.equal((await get(made(300))).status, 200);
      await settle();
      assert.equal((await get(made(w))).status, 200);
      await settle();
    }
    const rows = await db.selectFrom('image_derivatives').select(['id', 'size', 'blob_key', 'project_id']).execute();
    const firstId = first.headers.etag!.replaceAll('"', '');
    // Six results made, each once: the first was never evicted (else serving it again made it again).
    assert.equal(delta(m0, await results(), 'miss'), 6);
    console.log(`  cached: ${rows.map((r) => r.size).join(', ')} bytes`);
    assert.ok(
      rows.some((r) => r.id === firstId),
      'the result served most recently stays, though it was made first',
    );
    const total = rows.reduce((s, r) => s + Number(r.size), 0);
    assert.ok(total <= 60_000, `within the budget: ${total}`);
    const mine = rows.filter((r) => r.project_id === p.id);
    assert.ok(mine.length >= 1 && mine.length < 6, `some evicted: ${mine.length} kept`);
    for (const r of rows) assert.ok(await blobs.stat(r.blob_key), 'each row has its blob');
    assert.equal((await t.call('DELETE', `/files/${file}`, { key: p.key })).status, 200);
    const left = await db.selectFrom('image_derivatives').select('blob_key').where('file_id', '=', file).execute();
    assert.equal(left.length, 0);
    for (const r of mine) assert.equal(await blobs.stat(r.blob_key), null);
  });

  it('answers 429 with Retry-After past the project’s misses per minute; hits still pass', async () => {
    const p = await project('imgurl', 'burst');
    const file = await upload(p, 'image-png', 'b.png');
    const hit = imgUrl(p, 'width:1', file);
    assert.equal((await get(hit)).status, 200);
    let limited: Raw | undefined;
    for (let w = 2; w <= 45 && !limited; w++) {
      const res = await get(imgUrl(p, `width:${w}`, file));
      if (res.status === 429) limited = res;
      else assert.equal(res.status, 200);
    }
    assert.ok(limited, 'a 429 came');
    assert.equal(json(limited).error.code, 'rate_limited');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
  });
});

describe('presets and unsigned URLs', () => {
  it('serves `_/preset:name` only when the project allows it, and only for a preset alone', async () => {
    const created = await t.call('POST', '/image-presets', {
      key: a.key,
      body: { name: 'thumb', options: { width: 32, height: 32, fit: 'cover', format: 'webp' } },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.data.path, 'width:32,height:32,fit:cover,format:webp');
    const bad = await t.call('POST', '/image-presets', { key: a.key, body: { name: 'x', options: { fit: 'nope' } } });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.details[0].field, 'options.fit');
    const unsigned = `/img/${a.id}/_/preset:thumb/${files.jpeg}`;
    assert.equal((await get(unsigned)).status, 403, 'off by default');
    const on = await t.call('PATCH', '/project/image-url-settings', {
      key: a.key,
      body: { allow_unsigned_presets: true },
    });
    assert.equal(on.json.data.allow_unsigned_presets, true);
    const res = await get(unsigned);
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'public, max-age=3600');
    const m = await sharp(res.body).metadata();
    assert.deepEqual([m.format, m.width, m.height], ['webp', 32, 32]);
    assert.equal((await get(`/img/${a.id}/_/preset:thumb,width:2000/${files.jpeg}`)).status, 403);
    assert.equal((await get(`/img/${a.id}/_/width:20/${files.jpeg}`)).status, 403);
    // A signed URL may add to a preset; a preset that does not exist is a 400 naming it.
    const more = await get(imgUrl(a, 'preset:thumb,width:48', files.jpeg!));
    assert.equal((await sharp(more.body).metadata()).width, 48);
    const missing = await get(imgUrl(a, 'preset:nope', files.jpeg!));
    assert.equal(missing.status, 400);
    assert.equal(json(missing).error.details[0].field, 'preset');
    assert.equal((await t.call('GET', '/image-presets', { key: a.key })).json.data.length, 1);
    assert.equal((await t.call('DELETE', '/image-presets/thumb', { key: a.key })).status, 200);
    assert.equal((await get(unsigned)).status, 400);
  });
});

describe('docs/image-urls.md', () => {
  it('signs as its shell, JavaScript and Python samples do: each URL they print is served', async () => {
    const doc = await fs.readFile(path.join(ROOT, 'docs/image-urls.md'), 'utf8');
    const sample = (name: string) => {
      const m = new RegExp(`<!-- sample:${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\`\`\``).exec(doc);
      assert.ok(m, name);
      return m[1]!;
    };
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'imgurl-samples-'));
    const env = { ...process.env, KEY: a.imk, PROJECT: a.id, FILE: files.jpeg!, BASE: t.base };
    try {
      await fs.writeFile(path.join(dir, 'sign.mjs'), sample('javascript'));
      await fs.writeFile(path.join(dir, 'sign.py'), sample('python'));
      const printed = [
        (await run('bash', ['-c', sample('shell')], { env })).stdout.trim(),
        (await run('node', [path.join(dir, 'sign.mjs')], { env })).stdout.trim(),
        (await run('python3', [path.join(dir, 'sign.py')], { env })).stdout.trim(),
      ];
      assert.equal(new Set(printed).size, 1, printed.join('\n'));
      const res = await get(printed[0]!);
      assert.equal(res.status, 200);
      const m = await sharp(res.body).metadata();
      assert.deepEqual([m.format, m.width], ['webp', 400]);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('image URLs on S3 storage', () => {
  let s3: LocalS3;
  let s: TestServer;
  before(async () => {
    s3 = await startS3();
    s = await startTestServer(s3.env('imgurl'));
  });
  after(async () => {
    await s?.stop();
    await s3?.close();
  });

  it('reads the source from the bucket, stores the result under image-cache/, drops it with the file', async () => {
    const k = await s.key('imgurl', 's3');
    const imk = (await s.call('POST', '/project/image-url-key/reveal', { key: k.key })).json.data.key as string;
    const put = await s.call('PUT', `/d/${k.project_id}/s3.jpg`, {
      key: k.key,
      raw: await fs.readFile(await fixture('image-jpeg')),
    });
    assert.equal(put.status, 201, put.text);
    const file = put.json.data.id as string;
    const opts = 'width:100,format:webp';
    const url = `${s.base}/img/${k.project_id}/${sign(imk, `/${opts}/${file}`)}/${opts}/${file}`;
    const res = await request(url, { dispatcher: s.agent });
    const body = Buffer.from(await res.body.arrayBuffer());
    assert.equal(res.statusCode, 200);
    assert.deepEqual([(await sharp(body).metadata()).format, (await sharp(body).metadata()).width], ['webp', 100]);
    const cached = async () => (await s3.keys('imgurl/image-cache/')).length;
    for (let i = 0; i < 100 && (await cached()) === 0; i++) await new Promise((r) => setTimeout(r, 30));
    assert.equal(await cached(), 1, 'the result is stored in the bucket');
    const again = await request(url, { dispatcher: s.agent });
    assert.deepEqual(Buffer.from(await again.body.arrayBuffer()), body);
    assert.equal((await s.call('DELETE', `/files/${file}`, { key: k.key })).status, 200);
    assert.equal(await cached(), 0, 'deleting the file deleted its result');
  });
});

describe('image URLs on two mediad processes sharing one PostgreSQL database', { timeout: 120_000 }, () => {
  const pgUrl = process.env.MEDIAD_TEST_DATABASE_URL;
  it(
    'makes concurrent identical misses once across both, and counts misses against one shared limit',
    { skip: pgUrl ? false : 'PostgreSQL only (MEDIAD_TEST_DATABASE_URL)' },
    async () => {
      const { servesOnPostgres } = await import('../helpers/serve-process.js');
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-imgurl-pg-'));
      const limit = 4;
      const pair = await servesOnPostgres(
        [dataDir, dataDir],
        { MEDIAD_IMAGE_URL_MISSES_PER_MINUTE: String(limit) },
        { org: 'imgurl', project: 'two' },
      );
      const { servers, key: k, db } = pair;
      const agent = pair.agents[0]!;
      try {
        const fetch = async (base: string, p: string, init: { method?: string; body?: Buffer } = {}) => {
          const res = await request(`${base}${p}`, {
            method: (init.method ?? 'GET') as 'GET',
            headers: { authorization: `Bearer ${k.key}` },
            body: init.body,
            dispatcher: agent,
          });
          return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
        };
        const put = await fetch(servers[0]!.base, `/d/${k.project_id}/big.jpg`, {
          method: 'PUT',
          body: await fs.readFile(await fixture('image-jpeg-4000x3000')),
        });
        assert.equal(put.status, 201, put.body.toString());
        const file = JSON.parse(put.body.toString()).data.id as string;
        const imk = (await servers[1]!.call('POST', '/project/image-url-key/reveal', { key: k.key })).json.data.key;
        const url = (opts: string) => `/img/${k.project_id}/${sign(imk, `/${opts}/${file}`)}/${opts}/${file}`;
        const misses = async () => {
          let n = 0;
          for (const s of servers) {
            const text = (await fetch(s.base, '/metrics')).body.toString();
            n += Number(/^mediad_image_url_results_total\{result="miss"\} (\d+)/m.exec(text)?.[1] ?? 0);
          }
          return n;
        };

        // Six identical requests at once, three on each process: one computation (a 4000×3000 decode,
        // long enough for all to overlap), the same bytes everywhere.
        const same = url('width:800,format:webp');
        const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => fetch(servers[i % 2]!.base, same)));
        for (const a of answers) assert.equal(a.status, 200, a.body.toString().slice(0, 200));
        for (const a of answers) assert.deepEqual(a.body, answers[0]!.body);
        assert.equal(await misses(), 1, 'computed once across both processes');
        const usage = await db
          .selectFrom('usage_counters')
          .select((eb) => eb.fn.sum<string | number>('value').as('n'))
          .where('project_id', '=', k.project_id)
          .where('metric', '=', 'image_transformations')
          .where('period', '=', 'h')
          .executeTakeFirst();
        assert.equal(Number(usage?.n), 1);

        // New results alternately on each process: with one count per process each would allow the
        // whole limit; shared, both together stop near it (two misses are counted above, one per process).
        const made: number[] = [];
        let refused: Record<string, string | string[] | undefined> | null = null;
        for (let w = 0; w < 2 * limit; w++) {
          const res = await fetch(servers[w % 2]!.base, url(`width:${100 + w},format:png`));
          if (res.status === 200) made.push(w);
          else {
            assert.equal(res.status, 429, res.body.toString());
            refused ??= res.headers;
          }
        }
        assert.ok(made.length >= 1 && made.length <= limit - 1, `made ${made.length} of ${2 * limit}`);
        assert.ok(refused && Number(refused['retry-after']) >= 1);
        // Hits are never limited, on either process.
        assert.equal((await fetch(servers[1]!.base, same)).status, 200);
      } finally {
        await pair.stop();
        await fs.rm(dataDir, { recursive: true, force: true });
      }
    },
  );
});
