// Resumable uploads (issue 25): the tus 1.0 endpoint driven by the real tus-js-client over HTTPS.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import * as tus from 'tus-js-client';
import type { LocalS3 } from '../helpers/s3.js';
import { startTestServer, type ApiResponse, type TestServer } from '../helpers/server.js';

/** A PCM WAV of `seconds` of noise (48 kHz stereo: 192 KB a second), which ffprobe reads as audio. */
function wav(seconds: number): Buffer {
  const data = randomBytes(48_000 * 4 * seconds);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(2, 22);
  h.writeUInt32LE(48_000, 24);
  h.writeUInt32LE(48_000 * 4, 28);
  h.writeUInt16LE(4, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface Options {
  token: string;
  metadata?: Record<string, string>;
  chunkSize?: number;
  uploadUrl?: string;
  deferred?: boolean;
  withCreation?: boolean;
  /** Aborts the upload once this many bytes were acknowledged. */
  abortAt?: number;
}

let ca: string;
/** Runs tus-js-client to the end (or to `abortAt`); resolves with the upload URL and the last response. */
function upload(t: TestServer, file: Buffer, o: Options) {
  return new Promise<{ url: string; fileId?: string; aborted: boolean }>((resolve, reject) => {
    let aborted = false;
    const u: tus.Upload = new tus.Upload(file, {
      endpoint: `${t.base}/uploads/tus`,
      ...(o.uploadUrl ? { uploadUrl: o.uploadUrl } : {}),
      headers: { authorization: `Bearer ${o.token}` },
      metadata: o.metadata ?? { filename: `clip-${Math.random().toString(36).slice(2)}.wav` },
      chunkSize: o.chunkSize ?? Infinity,
      retryDelays: null,
      uploadLengthDeferred: o.deferred ?? false,
      uploadDataDuringCreation: o.withCreation ?? false,
      storeFingerprintForResuming: false,
      httpStack: new tus.DefaultHttpStack({ ca, servername: 'localhost' }),
      // The connection is cut mid-request once `abortAt` bytes were sent.
      onProgress: (sent) => {
        if (o.abortAt !== undefined && sent >= o.abortAt && !aborted) {
          aborted = true;
          void u.abort().then(() => resolve({ url: u.url!, aborted: true }));
        }
      },
      onSuccess: ({ lastResponse }) =>
        resolve({ url: u.url!, fileId: lastResponse.getHeader('mediad-file-id'), aborted: false }),
      onError: reject,
    });
    u.start();
  });
}

const tusHeaders = (key: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${key}`,
  'tus-resumable': '1.0.0',
  ...extra,
});

/**
 * A 50 MB upload cut at a random offset (1 MiB chunks, the one in flight is cut), resumed by a new
 * client instance from the server's offset (8 MiB chunks): the file has the same bytes and fields.
 */
async function cutAndResumed(t: TestServer, key: string, other: string) {
  const file = wav(270); // ~52 MB
  const cut = Math.floor(file.length * (0.1 + 0.7 * Math.random()));
  const first = await upload(t, file, {
    token: key,
    // 1 MiB chunks: progress is reported as each is written, and the one in flight is cut.
    chunkSize: 1024 * 1024,
    abortAt: cut,
    metadata: { filename: 'resumed.wav', folder: 'tus', ref: 'raw', metadata: '{"camera":"a"}' },
  });
  assert.equal(first.aborted, true);
  const head = await t.call('HEAD', new URL(first.url).pathname, { key, headers: { 'tus-resumable': '1.0.0' } });
  assert.equal(head.status, 200);
  const offset = Number(head.headers['upload-offset']);
  assert.ok(
    offset > 0 && offset < file.length,
    `the server kept what arrived (${offset} of ${file.length}, cut at ${cut})`,
  );
  assert.equal(head.headers['upload-length'], String(file.length));
  // A new client instance resumes at the server's offset.
  const second = await upload(t, file, { token: key, uploadUrl: first.url, chunkSize: 8 * 1024 * 1024 });
  assert.ok(second.fileId?.startsWith('file_'), 'the last PATCH names the file');
  const got = await t.call('GET', `/files/${second.fileId}`, { key });
  assert.equal(got.status, 200);
  const f = got.json.data;
  assert.equal(f.kind, 'audio');
  assert.equal(f.filesize, file.length);
  assert.equal(f.folder, 'tus');
  assert.equal(f.filename, 'resumed.wav');
  assert.equal(f.ref, 'raw');
  assert.deepEqual(f.metadata, { camera: 'a' });
  assert.ok(f.duration > 100);
  const blob = await request(f.url, { dispatcher: t.agent, headers: { authorization: `Bearer ${key}` } });
  assert.equal(blob.statusCode, 200);
  assert.equal(sha256(Buffer.from(await blob.body.arrayBuffer())), sha256(file));
  // A later HEAD carries the file id.
  const done = await t.call('HEAD', new URL(first.url).pathname, { key, headers: { 'tus-resumable': '1.0.0' } });
  assert.equal(done.headers['mediad-file-id'], f.id);
  assert.equal(done.headers['upload-offset'], String(file.length));
  // Another project's key does not find the upload (nor could it write to it).
  const foreign = await t.call('HEAD', new URL(first.url).pathname, {
    key: other,
    headers: { 'tus-resumable': '1.0.0' },
  });
  assert.equal(foreign.status, 404);
  return f as { id: string; project_id?: string };
}

describe('tus uploads (/uploads/tus)', { timeout: 90_000 }, () => {
  let t: TestServer;
  let key: string;
  let other: string;
  before(async () => {
    t = await startTestServer({ MEDIAD_MAX_FILE_BYTES: String(64 * 1024 * 1024), MEDIAD_SERVE_WORKERS: 'false' });
    ca = await fs.readFile(t.server.caCertPath!, 'utf8');
    key = (await t.key('acme', 'uploads')).key;
    other = (await t.key('other', 'elsewhere')).key;
  });
  after(async () => t.stop());

  it('OPTIONS advertises version, extensions, checksum algorithms and the size limit', async () => {
    const res = await t.call('OPTIONS', '/uploads/tus', { key });
    assert.equal(res.status, 204);
    assert.equal(res.headers['tus-version'], '1.0.0');
    for (const ext of [
      'creation',
      'creation-with-upload',
      'creation-defer-length',
      'termination',
      'expiration',
      'checksum',
    ])
      assert.ok(res.headers['tus-extension']!.split(',').includes(ext), ext);
    assert.equal(res.headers['tus-checksum-algorithm'], 'sha1,sha256,md5');
    assert.equal(res.headers['tus-max-size'], String(64 * 1024 * 1024));
  });

  it('answers browsers on other origins (CORS, no credentials): preflight without a key, errors and answers readable', async () => {
    const origin = { origin: 'https://shop.example' };
    const pre = await t.call('OPTIONS', '/uploads/tus/upl_x', {
      headers: { ...origin, 'access-control-request-method': 'PATCH' },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], '*');
    assert.match(pre.headers['access-control-allow-headers']!, /Upload-Offset/);
    assert.equal(pre.headers['access-control-allow-credentials'], undefined);
    const refused = await t.call('POST', '/uploads/tus', {
      headers: { ...origin, 'tus-resumable': '1.0.0', 'upload-length': '10' },
    });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers['access-control-allow-origin'], '*');
    const token = (await t.call('POST', '/uploads', { key, body: {} })).json.data.token;
    const created = await t.call('POST', '/uploads/tus', {
      headers: { ...origin, ...tusHeaders(token, { 'upload-length': '10' }) },
    });
    assert.equal(created.status, 201);
    assert.equal(created.headers['access-control-allow-origin'], '*');
    assert.match(created.headers['access-control-expose-headers']!, /Location.*Upload-Offset.*Mediad-File-Id/);
  });

  it('a 50 MB upload cut at a random offset resumes from a new client and becomes a probed file with the same bytes', async () => {
    await cutAndResumed(t, key, other);
  });

  it('creation-with-upload and creation-defer-length both end in a file', async () => {
    const small = wav(1);
    const a = await upload(t, small, { token: key, withCreation: true });
    assert.ok(a.fileId);
    const b = await upload(t, small, { token: key, deferred: true, chunkSize: 64 * 1024 });
    assert.ok(b.fileId);
  });

  it('the last byte fires file.created and starts the automations that listen for it, as a PUT does', async () => {
    const { key: own } = await t.key('acme', 'automated');
    const automation = await t.call('POST', '/automations', {
      key: own,
      body: { trigger: { kind: 'event', event: 'file.created' }, workflow: [{ kind: 'audio', format: 'mp3' }] },
    });
    assert.equal(automation.status, 201, automation.text);
    const { fileId } = await upload(t, wav(1), { token: own, withCreation: true });
    const file = (await t.call('GET', `/files/${fileId}`, { key: own })).json.data;
    const events = (await t.call('GET', '/events?type=file.created&limit=100', { key: own })).json.data;
    assert.ok(
      events.some((e: { data: { id: string } }) => e.data.id === fileId),
      'file.created for the uploaded file',
    );
    let run: { automation_id: string } | undefined;
    for (let i = 0; i < 200 && !run; i++) {
      const tasks = (await t.call('GET', '/tasks?kind=workflow&limit=100', { key: own })).json.data;
      run = tasks.find(
        (x: { automation_id: string; input?: { media_id?: string } }) =>
          x.automation_id === automation.json.data.id && x.input?.media_id === file.media_id,
      );
      if (!run) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(run, 'the automation started a workflow for the uploaded media');
  });

  it('refuses at creation: Upload-Length over MEDIAD_MAX_FILE_BYTES (413), bad metadata (400), no Tus-Resumable (412)', async () => {
    const big = await t.call('POST', '/uploads/tus', {
      key,
      headers: tusHeaders(key, { 'upload-length': String(65 * 1024 * 1024) }),
    });
    assert.equal(big.status, 413);
    assert.equal(big.json.error.code, 'payload_too_large');
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const cases: [string, string][] = [
      [`filename ${b64('a.wav')},colour ${b64('red')}`, 'colour'],
      [`filename @@@`, 'filename'],
      [`metadata ${b64('[1,2]')}`, 'metadata'],
      [`ref ${b64('no spaces')}`, 'ref'],
    ];
    for (const [header, field] of cases) {
      const res = await t.call('POST', '/uploads/tus', {
        key,
        headers: tusHeaders(key, { 'upload-length': '10', 'upload-metadata': header }),
      });
      assert.equal(res.status, 400, header);
      assert.ok(JSON.stringify(res.json.error).includes(field), `${header}: ${res.text}`);
    }
    const media = await t.call('POST', '/uploads/tus', {
      key,
      headers: tusHeaders(key, { 'upload-length': '10', 'upload-metadata': `media_id ${b64('med_nope')}` }),
    });
    assert.equal(media.status, 404);
    const pre = await t.call('POST', '/uploads/tus', { key, headers: { 'upload-length': '10' } });
    assert.equal(pre.status, 412);
    assert.equal(pre.json.error.code, 'precondition_failed');
    assert.equal(pre.headers['tus-version'], '1.0.0');
  });

  it('PATCH: wrong offset 409, wrong Content-Type 415, bad checksum 460 (nothing kept), good checksum accepted', async () => {
    const created = await t.call('POST', '/uploads/tus', { key, headers: tusHeaders(key, { 'upload-length': '8' }) });
    assert.equal(created.status, 201);
    const loc = new URL(created.headers.location!).pathname;
    const patch = (headers: Record<string, string>, raw: Buffer) => t.call('PATCH', loc, { key, headers, raw });
    const octet = { 'content-type': 'application/offset+octet-stream' };
    const wrongOffset = await patch(tusHeaders(key, { ...octet, 'upload-offset': '3' }), Buffer.from('abcd'));
    assert.equal(wrongOffset.status, 409);
    const wrongType = await patch(
      tusHeaders(key, { 'content-type': 'text/plain', 'upload-offset': '0' }),
      Buffer.from('abcd'),
    );
    assert.equal(wrongType.status, 415);
    const sha1 = (b: Buffer) => createHash('sha1').update(b).digest('base64');
    const bad = await patch(
      tusHeaders(key, { ...octet, 'upload-offset': '0', 'upload-checksum': `sha1 ${sha1(Buffer.from('xxxx'))}` }),
      Buffer.from('abcd'),
    );
    assert.equal(bad.status, 460);
    assert.equal(bad.json.error.code, 'checksum_mismatch');
    const unsupported = await patch(
      tusHeaders(key, { ...octet, 'upload-offset': '0', 'upload-checksum': 'crc32 AAAA' }),
      Buffer.from('abcd'),
    );
    assert.equal(unsupported.status, 400);
    const head = await t.call('HEAD', loc, { key, headers: tusHeaders(key) });
    assert.equal(head.headers['upload-offset'], '0', 'the bad chunk was not kept');
    const good = await patch(
      tusHeaders(key, { ...octet, 'upload-offset': '0', 'upload-checksum': `sha1 ${sha1(Buffer.from('abcd'))}` }),
      Buffer.from('abcd'),
    );
    assert.equal(good.status, 204);
    assert.equal(good.headers['upload-offset'], '4');
    // Another project: 404 on PATCH and DELETE too.
    const foreign = await t.call('PATCH', loc, {
      key: other,
      headers: tusHeaders(other, { ...octet, 'upload-offset': '4' }),
      raw: Buffer.from('efgh'),
    });
    assert.equal(foreign.status, 404);
    // Termination.
    const del = await t.call('DELETE', loc, { key, headers: tusHeaders(key) });
    assert.equal(del.status, 204);
    const gone = await t.call('HEAD', loc, { key, headers: tusHeaders(key) });
    assert.equal(gone.status, 404);
  });

  it('tus errors come in the API generation of the request: the envelope, or the bare error with Accept-Version 2025-08-20', async () => {
    const bare = { 'accept-version': '2025-08-20' };
    const created = await t.call('POST', '/uploads/tus', { key, headers: tusHeaders(key, { 'upload-length': '8' }) });
    const loc = new URL(created.headers.location!).pathname;
    const octet = { 'content-type': 'application/offset+octet-stream' };
    const cases: [number, (extra: Record<string, string>) => Promise<ApiResponse>][] = [
      // Answered by the tus library (its status mapped to an API error).
      [
        409,
        (extra) =>
          t.call('PATCH', loc, {
            key,
            headers: tusHeaders(key, { ...octet, 'upload-offset': '3', ...extra }),
            raw: Buffer.from('ab'),
          }),
      ],
      // Answered by mediad's route before the library.
      [
        415,
        (extra) =>
          t.call('PATCH', loc, {
            key,
            headers: tusHeaders(key, { 'content-type': 'text/plain', 'upload-offset': '0', ...extra }),
            raw: Buffer.from('ab'),
          }),
      ],
      [412, (extra) => t.call('POST', '/uploads/tus', { key, headers: { 'upload-length': '10', ...extra } })],
    ];
    for (const [status, send] of cases) {
      const enveloped = await send({});
      assert.equal(enveloped.status, status);
      assert.equal(typeof enveloped.json.error.code, 'string', enveloped.text);
      const plain = await send(bare);
      assert.equal(plain.status, status);
      assert.equal(plain.json.error, undefined, plain.text);
      assert.equal(plain.json.code, enveloped.json.error.code, plain.text);
      assert.equal(typeof plain.json.message, 'string');
    }
  });

  it('a PATCH whose client stalls gives way to the next PATCH of the upload, keeping the bytes that came', async () => {
    // The stalled request's body is written by the store directly (storage/tus-handoff.ts): it must
    // stop when the library lets the waiting request take the lock (after its lockDrainTimeout, 3 s),
    // or the second PATCH would wait for the lock until it times out (30 s).
    const file = wav(4);
    const first = 256 * 1024;
    const created = await t.call('POST', '/uploads/tus', {
      key,
      headers: tusHeaders(key, { 'upload-length': String(file.length) }),
    });
    const loc = new URL(created.headers.location!).pathname;
    const octet = { 'content-type': 'application/offset+octet-stream' };
    const stalled = https.request(`${t.base}${loc}`, {
      method: 'PATCH',
      ca,
      headers: tusHeaders(key, { ...octet, 'upload-offset': '0', 'content-length': String(file.length) }),
    });
    stalled.on('error', () => {}); // destroyed below
    stalled.write(file.subarray(0, first));
    try {
      let offset = '';
      for (let i = 0; i < 100 && offset !== String(first); i++) {
        await new Promise((r) => setTimeout(r, 50));
        offset = (await t.call('HEAD', loc, { key, headers: tusHeaders(key) })).headers['upload-offset'] ?? '';
      }
      assert.equal(offset, String(first), 'the stalled PATCH wrote what it received');
      const rest = await t.call('PATCH', loc, {
        key,
        headers: tusHeaders(key, { ...octet, 'upload-offset': String(first) }),
        raw: file.subarray(first),
      });
      assert.equal(rest.status, 204);
      assert.equal(rest.headers['upload-offset'], String(file.length));
      const fileId = rest.headers['mediad-file-id'];
      assert.ok(fileId?.startsWith('file_'));
      const got = await t.call('GET', `/files/${fileId}`, { key });
      const blob = await request(got.json.data.url, {
        dispatcher: t.agent,
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(sha256(Buffer.from(await blob.body.arrayBuffer())), sha256(file));
    } finally {
      stalled.destroy();
    }
  });

  it('bytes that are not media are refused at the last byte (422) and the upload is gone', async () => {
    const created = await t.call('POST', '/uploads/tus', { key, headers: tusHeaders(key, { 'upload-length': '4' }) });
    const loc = new URL(created.headers.location!).pathname;
    const res = await t.call('PATCH', loc, {
      key,
      headers: tusHeaders(key, { 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }),
      raw: Buffer.from('abcd'),
    });
    assert.equal(res.status, 422);
    assert.equal(res.json.error.code, 'media_unsupported');
    assert.deepEqual(
      await fs.readdir(path.join(t.dataDir, 'uploads')).then((n) => n.filter((x) => x.includes(loc.split('/').pop()!))),
      [],
    );
  });

  it('an upload token from POST /uploads uploads without a key, for its project only', async () => {
    const made = await t.call('POST', '/uploads', { key, body: { expires_in: 600 } });
    assert.equal(made.status, 201);
    const token: string = made.json.data.token;
    assert.match(token, /^mdu_/);
    assert.equal(made.json.data.upload_url, `${t.base}/uploads/tus`);
    const done = await upload(t, wav(1), { token });
    assert.ok(done.fileId);
    const file = await t.call('GET', `/files/${done.fileId}`, { key });
    assert.equal(file.status, 200);
    // The token is no API key.
    const files = await t.call('GET', '/files', { key: token });
    assert.equal(files.status, 401);
    const readOnly = await t.call('POST', '/uploads', { key: other, body: {} });
    assert.equal(readOnly.status, 201);
  });
});

/** `promise`, or a rejection naming `what` after `ms`. */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('tus upload expiry and mediad blobs sweep', { timeout: 60_000 }, () => {
  let t: TestServer;
  let key: string;
  before(async () => {
    t = await startTestServer({ MEDIAD_UPLOAD_EXPIRY_HOURS: '0.0003', MEDIAD_SERVE_WORKERS: 'false' }); // ~1 s
    ca = await fs.readFile(t.server.caCertPath!, 'utf8');
    key = (await t.key()).key;
  });
  after(async () => t.stop());

  it('an expired upload answers 410 and the sweep removes its bytes', async () => {
    const created = await t.call('POST', '/uploads/tus', {
      key,
      headers: tusHeaders(key, { 'upload-length': '100' }),
    });
    assert.equal(created.status, 201);
    assert.ok(created.headers['upload-expires']);
    const id = new URL(created.headers.location!).pathname.split('/').pop()!;
    const dir = path.join(t.dataDir, 'uploads');
    assert.ok((await fs.readdir(dir)).includes(id));
    await new Promise((r) => setTimeout(r, 1300));
    // Each step is bounded on its own: this test once hung on PostgreSQL in CI (1 run of 2, not
    // reproduced alone), and the suite's timeout did not say which step waited.
    const res = await within(
      20_000,
      'the PATCH of the expired upload',
      t.call('PATCH', `/uploads/tus/${id}`, {
        key,
        headers: tusHeaders(key, { 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }),
        raw: Buffer.from('abcd'),
      }),
    );
    assert.equal(res.status, 410);
    assert.equal(res.json.error.code, 'upload_expired');
    // `mediad blobs sweep` (the command, on the server's data dir and database) removes the bytes.
    const { execFile } = await import('node:child_process');
    const { MEDIAD } = await import('../helpers/paths.js');
    const env: Record<string, string> = { ...process.env, MEDIAD_DATA_DIR: t.dataDir, MEDIAD_LOG_LEVEL: 'silent' };
    if (t.databaseUrl) env.MEDIAD_DATABASE_URL = t.databaseUrl;
    const sweep = (...args: string[]) =>
      new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          [...MEDIAD, 'blobs', 'sweep', ...args],
          { env, timeout: 30_000 },
          (err, out, errOut) =>
            err
              ? reject(new Error(`mediad blobs sweep: ${err.message}\nstdout: ${out}\nstderr: ${errOut}`))
              : resolve(out),
        ),
      );
    const out = await sweep();
    assert.match(out, new RegExp(`deleted upload ${id}`));
    assert.match(out, /uploads: 1 expired/);
    assert.deepEqual(
      (await fs.readdir(dir)).filter((n) => n.startsWith(id)),
      [],
    );
  });
});

/**
 * Two `mediad serve` processes on one PostgreSQL database serve one upload's alternating PATCHes
 * (and concurrent ones of one offset). `storage`: the processes' blob storage env; with S3 each
 * process has a data dir of its own (they share only the database and the bucket).
 */
async function twoProcessesServeOneUpload(storage: {
  env: Record<string, string>;
  shareDataDir: boolean;
  chunk: number;
  seconds: number;
}) {
  const { servesOnPostgres } = await import('../helpers/serve-process.js');
  const os = await import('node:os');
  const dirs = [await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-tus-pg-'))];
  if (!storage.shareDataDir) dirs.push(await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-tus-pg-')));
  const pair = await servesOnPostgres([dirs[0]!, dirs[1] ?? dirs[0]!], storage.env, { org: 'acme', project: 'main' });
  const { servers, agents } = pair;
  const k = pair.key.key;
  try {
    const file = wav(storage.seconds);
    const send = (i: number, method: string, p: string, headers: Record<string, string>, body?: Buffer) =>
      request(`${servers[i]!.base}${p}`, {
        method: method as 'PATCH',
        headers: tusHeaders(k, headers),
        body,
        dispatcher: agents[i],
      });
    const created = await send(0, 'POST', '/uploads/tus', {
      'upload-length': String(file.length),
      'upload-metadata': `filename ${Buffer.from('two.wav').toString('base64')}`,
    });
    await created.body.dump();
    assert.equal(created.statusCode, 201);
    const loc = new URL(String(created.headers.location)).pathname;
    const chunk = storage.chunk;
    let fileId: string | undefined;
    for (let offset = 0, i = 0; offset < file.length; offset += chunk, i++) {
      if (i > 0) {
        // Each process reads the offset the other one left.
        const head = await send(i % 2, 'HEAD', loc, {});
        await head.body.dump();
        assert.equal(head.headers['upload-offset'], String(offset));
      }
      const res = await send(
        i % 2,
        'PATCH',
        loc,
        { 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) },
        file.subarray(offset, offset + chunk),
      );
      const text = await res.body.text();
      assert.equal(res.statusCode, 204, text);
      fileId = res.headers['mediad-file-id'] as string | undefined;
    }
    assert.ok(fileId);
    // Concurrent PATCHes of one offset on both processes: the lock lets one write at a time, so
    // the upload never holds the chunk twice.
    const racer = await send(1, 'POST', '/uploads/tus', { 'upload-length': String(2 * chunk) });
    await racer.body.dump();
    const rloc = new URL(String(racer.headers.location)).pathname;
    const both = await Promise.all(
      [0, 1].map(async (i) => {
        const r = await send(
          i,
          'PATCH',
          rloc,
          { 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
          file.subarray(0, chunk),
        );
        await r.body.dump();
        return r.statusCode;
      }),
    );
    assert.ok(both.includes(204), String(both));
    const head = await send(0, 'HEAD', rloc, {});
    await head.body.dump();
    assert.equal(head.headers['upload-offset'], String(chunk));
    const got = await request(`${servers[1]!.base}/files/${fileId}`, {
      headers: { authorization: `Bearer ${k}` },
      dispatcher: agents[1],
    });
    const json = (await got.body.json()) as { data: { url: string; filesize: number } };
    assert.equal(json.data.filesize, file.length);
    const blob = await request(json.data.url.replace(/^https:\/\/localhost:\d+/, servers[0]!.base), {
      headers: { authorization: `Bearer ${k}` },
      dispatcher: agents[0],
    });
    assert.equal(sha256(Buffer.from(await blob.body.arrayBuffer())), sha256(file));
    return { finished: loc.split('/').pop()!, unfinished: rloc.split('/').pop()! };
  } finally {
    await pair.stop();
    for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
  }
}

describe('two mediad processes on one PostgreSQL database serve one upload', { timeout: 120_000 }, () => {
  const skip = process.env.MEDIAD_TEST_DATABASE_URL ? false : 'PostgreSQL only (MEDIAD_TEST_DATABASE_URL)';
  it(
    'alternating PATCHes (advisory locks across processes) end in one file with the same bytes',
    { skip },
    async () => {
      await twoProcessesServeOneUpload({ env: {}, shareDataDir: true, chunk: 256 * 1024, seconds: 10 });
    },
  );
  it(
    'on S3: the processes share only the database and the bucket (parts and the .part tail in the bucket)',
    { skip },
    async () => {
      const { startS3 } = await import('../helpers/s3.js');
      const s3 = await startS3();
      try {
        // 3 MiB PATCHes: under S3's 5 MiB part minimum, so tails wait in `.part` and the next PATCH,
        // on the other process, prepends them.
        const ids = await twoProcessesServeOneUpload({
          env: s3.env('two'),
          shareDataDir: false,
          chunk: 3 * 1024 * 1024,
          seconds: 40,
        });
        // The finished upload left nothing in the bucket; the unfinished one is there (parts, record, tail).
        assert.deepEqual(await s3.keys('two/uploads/'), [
          `two/uploads/${ids.unfinished}.info`,
          `two/uploads/${ids.unfinished}.part`,
        ]);
        assert.deepEqual(await multipartUploads(s3, 'two/uploads/'), [`two/uploads/${ids.unfinished}`]);
        assert.notEqual(ids.finished, ids.unfinished);
      } finally {
        await s3.close();
      }
    },
  );
});

/** The bucket's unfinished multipart uploads under `prefix`. */
async function multipartUploads(s3: LocalS3, prefix: string): Promise<string[]> {
  const { ListMultipartUploadsCommand } = await import('@aws-sdk/client-s3');
  const page = await s3.client.send(new ListMultipartUploadsCommand({ Bucket: s3.bucket, Prefix: prefix }));
  return (page.Uploads ?? []).map((u) => u.Key!).sort();
}

describe(
  'tus uploads with S3 blob storage: partial uploads in the bucket (@tus/s3-store)',
  { timeout: 120_000 },
  () => {
    let s3: LocalS3;
    before(async () => {
      const { startS3 } = await import('../helpers/s3.js');
      s3 = await startS3();
    });
    after(async () => s3.close());

    it('a 50 MB upload cut and resumed from a new client: the file is copied in the bucket to its key, nothing left', async () => {
      const t = await startTestServer(
        s3.env('tus', { MEDIAD_SERVE_WORKERS: 'false', MEDIAD_MAX_FILE_BYTES: String(64 * 1024 * 1024) }),
      );
      try {
        ca = await fs.readFile(t.server.caCertPath!, 'utf8');
        const { key, project_id } = await t.key('acme', 'uploads');
        const other = (await t.key('other', 'elsewhere')).key;
        const f = await cutAndResumed(t, key, other);
        assert.deepEqual(await s3.keys(`tus/projects/${project_id}/files/${f.id}`), [
          `tus/projects/${project_id}/files/${f.id}`,
        ]);
        // The upload's objects and multipart upload are gone; nothing was kept in the data dir.
        assert.deepEqual(await s3.keys('tus/uploads/'), []);
        assert.deepEqual(await multipartUploads(s3, 'tus/uploads/'), []);
        assert.deepEqual(await fs.readdir(path.join(t.dataDir, 'uploads')).catch(() => []), []);
        // Small PATCHes (under S3's 5 MiB part minimum) go through the `.part` tail.
        const small = wav(10);
        const done = await upload(t, small, { token: key, chunkSize: 512 * 1024 });
        const g = (await t.call('GET', `/files/${done.fileId}`, { key })).json.data;
        const blob = await request(g.url, { dispatcher: t.agent });
        assert.equal(sha256(Buffer.from(await blob.body.arrayBuffer())), sha256(small));
      } finally {
        await t.stop();
      }
    });

    it('expiry and `mediad blobs sweep` abort the multipart upload and remove its .info and .part; orphans too', async () => {
      const t = await startTestServer(
        s3.env('exp', { MEDIAD_UPLOAD_EXPIRY_HOURS: '0.002', MEDIAD_SERVE_WORKERS: 'false' }), // 7.2 s
      );
      try {
        const { key } = await t.key();
        // A multipart upload without a record (a crash between the two): removed once past the expiry.
        const { CreateMultipartUploadCommand } = await import('@aws-sdk/client-s3');
        await s3.client.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: 'exp/uploads/upl_crashed' }));
        const expires = Date.now() + 7.2 * 1000;
        const created = await t.call('POST', '/uploads/tus', {
          key,
          headers: tusHeaders(key, { 'upload-length': String(20 * 1024 * 1024) }),
        });
        assert.equal(created.status, 201);
        const id = new URL(created.headers.location!).pathname.split('/').pop()!;
        const patch = (offset: number, bytes: number) =>
          t.call('PATCH', `/uploads/tus/${id}`, {
            key,
            headers: tusHeaders(key, {
              'content-type': 'application/offset+octet-stream',
              'upload-offset': String(offset),
            }),
            raw: randomBytes(bytes),
          });
        // 6 MiB: one part of the multipart upload; then 1 MiB: the `.part` tail.
        assert.equal((await patch(0, 6 * 1024 * 1024)).status, 204);
        assert.equal((await patch(6 * 1024 * 1024, 1024 * 1024)).status, 204);
        assert.deepEqual(
          await multipartUploads(s3, 'exp/uploads/'),
          [`exp/uploads/${id}`, 'exp/uploads/upl_crashed'].sort(),
        );
        assert.deepEqual(await s3.keys('exp/uploads/'), [`exp/uploads/${id}.info`, `exp/uploads/${id}.part`]);
        await new Promise((r) => setTimeout(r, Math.max(0, expires - Date.now()) + 300));
        assert.equal((await patch(7 * 1024 * 1024, 10)).status, 410);
        const { execFile } = await import('node:child_process');
        const { MEDIAD } = await import('../helpers/paths.js');
        const env: Record<string, string> = {
          ...process.env,
          ...s3.env('exp', { MEDIAD_UPLOAD_EXPIRY_HOURS: '0.002' }),
          MEDIAD_DATA_DIR: t.dataDir,
          MEDIAD_LOG_LEVEL: 'silent',
        };
        if (t.databaseUrl) env.MEDIAD_DATABASE_URL = t.databaseUrl;
        const out = await new Promise<string>((resolve, reject) =>
          execFile(process.execPath, [...MEDIAD, 'blobs', 'sweep'], { env }, (err, stdout) =>
            err ? reject(err) : resolve(stdout),
          ),
        );
        assert.match(out, new RegExp(`deleted upload ${id}`));
        assert.match(out, /deleted upload upl_crashed/);
        assert.match(out, /uploads: 1 expired and 1 without a record deleted/);
        assert.deepEqual(await multipartUploads(s3, 'exp/uploads/'), []);
        assert.deepEqual(await s3.keys('exp/uploads/'), []);
      } finally {
        await t.stop();
      }
    });
  },
);
