import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { masterVariants, playlistUris } from '../../src/media/index.js';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startS3, type LocalS3 } from '../helpers/s3.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';

// An adaptive_video package on S3 (s3rver on loopback): its entries are objects beside the
// file's, served by the delivery routes, and deleting the file deletes every one of them. With
// MEDIAD_S3_DELIVERY=redirect the segments redirect to presigned URLs; playlists stay rewritten.

let s3: LocalS3;
let origin: Origin;
let t: TestServer;
let redirecting: TestServer;
let key: string;
let projectId: string;

before(async () => {
  s3 = await startS3();
  origin = await startOrigin();
  t = await startTestServer(s3.env('mediad', { MEDIAD_ALLOWED_URL_HOSTS: origin.host }));
  redirecting = await startTestServer(
    s3.env('mediad-redirect', { MEDIAD_ALLOWED_URL_HOSTS: origin.host, MEDIAD_S3_DELIVERY: 'redirect' }),
  );
  ({ key, project_id: projectId } = await t.key('acme', 'stream'));
});
after(async () => {
  await t?.stop();
  await redirecting?.stop();
  await origin?.close();
  await s3?.close();
});

async function get(url: string, method: 'GET' | 'HEAD' = 'GET', server = t) {
  const res = await request(url, { dispatcher: server.agent, method });
  return {
    status: res.statusCode,
    headers: res.headers,
    type: res.headers['content-type'],
    text: await res.body.text(),
  };
}

describe('adaptive_video on S3', () => {
  it('stores the package as objects beside the file, serves them, and deletes them with the file', async () => {
    const input = await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/video-mp4') } });
    assert.equal(input.status, 201, input.text);
    const created = await t.call('POST', '/tasks', {
      key,
      body: { kind: 'adaptive_video', file_id: input.json.data.id, segment_seconds: 1, ladder: [{ height: 144 }] },
    });
    assert.equal(created.status, 201, created.text);
    const task = await waitForTask(t, key, created.json.data.id);
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    const fileKey = `mediad/projects/${projectId}/files/${task.output.id}`;
    const objects = await s3.keys(`${fileKey}.pkg/`);
    assert.ok(objects.includes(`${fileKey}.pkg/manifest.mpd`), objects.join(' '));
    assert.ok(objects.some((k) => /seg_0_00001\.m4s$/.test(k)));

    const master = await get(task.output.url);
    assert.equal(master.status, 200);
    const variantUrl = new URL(masterVariants(master.text)[0]!.uri, task.output.url).href;
    const media = await get(variantUrl);
    assert.equal(media.type, 'application/vnd.apple.mpegurl');
    const [init, first] = playlistUris(media.text);
    assert.equal((await get(new URL(init!, variantUrl).href)).type, 'video/mp4');
    const seg = await get(new URL(first!, variantUrl).href);
    assert.equal(seg.status, 200);
    assert.equal(seg.type, 'video/iso.segment');

    assert.equal((await t.call('DELETE', `/files/${task.output.id}`, { key })).status, 200);
    assert.deepEqual(await s3.keys(`${fileKey}`), []);
  });

  it('redirects segments to presigned URLs with MEDIAD_S3_DELIVERY=redirect; playlists stay with the server', async () => {
    const k = await redirecting.key('acme', 'redirect');
    const input = await redirecting.call('POST', '/files', {
      key: k.key,
      body: { url: origin.url('/fixtures/video-mp4') },
    });
    assert.equal(input.status, 201, input.text);
    const created = await redirecting.call('POST', '/tasks', {
      key: k.key,
      body: { kind: 'adaptive_video', file_id: input.json.data.id, segment_seconds: 1, ladder: [{ height: 144 }] },
    });
    const task = await waitForTask(redirecting, k.key, created.json.data.id);
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    const master = await get(task.output.url, 'GET', redirecting);
    assert.equal(master.status, 200, 'the master is rewritten by the server');
    const variantUrl = new URL(masterVariants(master.text)[0]!.uri, task.output.url).href;
    const media = await get(variantUrl, 'GET', redirecting);
    assert.equal(media.status, 200, 'so is every media playlist');
    assert.equal(media.type, 'application/vnd.apple.mpegurl');
    const mpd = await get(`${task.output.url}.pkg/manifest.mpd`, 'GET', redirecting);
    assert.equal(mpd.status, 200);
    const [init, first] = playlistUris(media.text);
    for (const [entry, type] of [
      [first!, 'video/iso.segment'],
      [init!, 'video/mp4'],
    ] as const) {
      const url = new URL(entry, variantUrl).href;
      const res = await get(url, 'GET', redirecting);
      assert.equal(res.status, 302, `${entry} redirects`);
      const location = String(res.headers.location);
      assert.ok(location.startsWith(s3.endpoint), location);
      assert.match(location, /X-Amz-Signature=/);
      assert.match(String(res.headers['cache-control']), /^private, max-age=\d+$/);
      const direct = await request(location);
      const bytes = Buffer.from(await direct.body.arrayBuffer());
      assert.equal(direct.statusCode, 200);
      assert.equal(direct.headers['content-type'], type);
      assert.ok(bytes.length > 100);
      const head = await get(url, 'HEAD', redirecting);
      assert.equal(head.status, 200, 'HEAD stays local');
      assert.equal(Number(head.headers['content-length']), bytes.length);
    }
    assert.equal(
      (await get(new URL('seg_0_99999.m4s', variantUrl).href, 'GET', redirecting)).status,
      404,
      'a missing entry is ours to refuse',
    );
  });
});
