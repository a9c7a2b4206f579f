import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { fixture } from '../helpers/fixtures.js';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startS3, type LocalS3 } from '../helpers/s3.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';

// mediad with MEDIAD_STORAGE_URL=s3://…: every byte goes through a local S3 protocol server (s3rver on loopback).

let s3: LocalS3;
let origin: Origin;
let t: TestServer;
let key: string;
let projectId: string;
let video: Buffer;
let videoFile: any;

async function raw(url: string, opts: { method?: string; headers?: Record<string, string>; server?: TestServer } = {}) {
  const res = await request(url, {
    method: (opts.method ?? 'GET') as 'GET',
    headers: opts.headers,
    dispatcher: (opts.server ?? t).agent,
  });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers as Record<string, string | undefined>, body };
}

/** The object key of a file's blob in the bucket. */
const objectOf = (prefix: string, fileId: string) => `${prefix}/projects/${projectId}/files/${fileId}`;

before(async () => {
  s3 = await startS3();
  origin = await startOrigin();
  t = await startTestServer(
    s3.env('mediad', { MEDIAD_ALLOWED_URL_HOSTS: origin.host, MEDIAD_WORKER_CONCURRENCY: '1' }),
  );
  ({ key, project_id: projectId } = await t.key('acme', 'prod'));
  video = await fs.readFile(await fixture('video-mp4'));
  const res = await t.call('POST', '/files', {
    key,
    body: { url: origin.url('/fixtures/video-mp4'), folder: 'clips', filename: 'a.mp4' },
  });
  assert.equal(res.status, 201, res.text);
  videoFile = res.json.data;
});
after(async () => {
  await t?.stop();
  await origin?.close();
  await s3?.close();
});

describe('S3 storage', () => {
  it('stores an ingested file as an object under the prefix, nothing under the data dir', async () => {
    assert.deepEqual(await s3.keys(`mediad/projects/${projectId}/`), [objectOf('mediad', videoFile.id)]);
    assert.equal(t.server.runtime.deps.blobs.localPath(`projects/${projectId}/files/${videoFile.id}`), null);
    await assert.rejects(fs.stat(path.join(t.dataDir, 'blobs')), { code: 'ENOENT' });
    assert.equal((await t.call('GET', '/health')).status, 200);
  });

  it('delivers the whole file and ranges of it, streamed from S3', async () => {
    const full = await raw(videoFile.url);
    assert.equal(full.status, 200);
    assert.ok(full.body.equals(video), 'body equals the fixture');
    assert.equal(full.headers['content-length'], String(video.length));
    assert.equal(full.headers['content-type'], 'video/mp4');

    const size = video.length;
    for (const [range, start, end] of [
      ['bytes=0-0', 0, 0],
      ['bytes=100-1099', 100, 1099],
      [`bytes=${size - 10}-${size + 50}`, size - 10, size - 1],
      ['bytes=-300', size - 300, size - 1],
    ] as const) {
      const part = await raw(videoFile.url, { headers: { range } });
      assert.equal(part.status, 206, range);
      assert.equal(part.headers['content-range'], `bytes ${start}-${end}/${size}`, range);
      assert.ok(part.body.equals(video.subarray(start, end + 1)), `${range}: bytes differ`);
    }
    assert.equal((await raw(videoFile.url, { headers: { range: `bytes=${size}-` } })).status, 416);
  });

  it('an image task reads its input from S3 and writes its output back', async () => {
    const image = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-png') } })).json.data;
    const created = await t.call('POST', '/tasks', {
      key,
      body: { kind: 'image', file_id: image.id, width: 32, format: 'webp' },
    });
    assert.equal(created.status, 201, created.text);
    const task = await waitForTask(t, key, created.json.data.id);
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    assert.ok(
      (await s3.keys(`mediad/projects/${projectId}/`)).includes(objectOf('mediad', task.output.id)),
      'the output is an object in the bucket',
    );
    const out = await raw(task.output.url);
    assert.equal(out.status, 200);
    assert.equal(out.body.subarray(8, 12).toString('latin1'), 'WEBP');
    assert.equal(out.body.length, Number(task.output.filesize));
  });

  it('DELETE /files removes the object from the bucket', async () => {
    const file = (
      await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-png'), folder: 'gone' } })
    ).json.data;
    assert.ok((await s3.keys(objectOf('mediad', file.id))).length === 1);
    const res = await t.call('DELETE', `/files/${file.id}`, { key });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await s3.keys(objectOf('mediad', file.id)), []);
    assert.equal((await raw(file.url)).status, 404);
  });

  it('in redirect mode, GET answers 302 to a presigned URL of the object; HEAD and 304 stay local', async () => {
    const r = await startTestServer(
      s3.env('mediad', {
        MEDIAD_S3_DELIVERY: 'redirect',
        MEDIAD_S3_PRESIGN_SECONDS: '120',
        MEDIAD_ALLOWED_URL_HOSTS: origin.host,
        MEDIAD_SERVE_WORKERS: 'false',
      }),
    );
    try {
      const { key: rkey } = await r.key('acme', 'prod');
      const res = await r.call('POST', '/files', {
        key: rkey,
        body: { url: origin.url('/fixtures/video-mp4'), folder: 'clips', filename: 'b c.mp4' },
      });
      assert.equal(res.status, 201, res.text);
      const file = res.json.data;

      const redirect = await raw(file.url, { server: r });
      assert.equal(redirect.status, 302);
      assert.equal(redirect.headers['cache-control'], 'private, max-age=60');
      assert.equal(redirect.headers.etag, undefined);
      const location = redirect.headers.location!;
      assert.ok(location.startsWith(`${s3.endpoint}/${s3.bucket}/mediad/projects/`), location);

      // The presigned URL is fetched from s3rver directly (loopback, no mediad in between).
      const direct = await request(location);
      assert.equal(direct.statusCode, 200);
      assert.equal(direct.headers['content-type'], 'video/mp4');
      assert.equal(direct.headers['content-disposition'], "inline; filename*=UTF-8''b%20c.mp4");
      assert.ok(Buffer.from(await direct.body.arrayBuffer()).equals(video), 'the presigned URL serves the file');
      const ranged = await request(location, { headers: { range: 'bytes=10-19' } });
      assert.equal(ranged.statusCode, 206);
      assert.ok(Buffer.from(await ranged.body.arrayBuffer()).equals(video.subarray(10, 20)));

      const head = await raw(file.url, { method: 'HEAD', server: r });
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-length'], String(video.length));
      const etag = head.headers.etag!;
      assert.equal((await raw(file.url, { headers: { 'if-none-match': etag }, server: r })).status, 304);
    } finally {
      await r.stop();
    }
  });
});
