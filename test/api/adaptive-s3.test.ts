import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { masterVariants, playlistUris } from '../../src/media/index.js';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startS3, type LocalS3 } from '../helpers/s3.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';

// An adaptive_video package on S3 (s3rver on loopback): its entries are objects beside the
// file's, served by the delivery routes, and deleting the file deletes every one of them.

let s3: LocalS3;
let origin: Origin;
let t: TestServer;
let key: string;
let projectId: string;

before(async () => {
  s3 = await startS3();
  origin = await startOrigin();
  t = await startTestServer(s3.env('mediad', { MEDIAD_ALLOWED_URL_HOSTS: origin.host }));
  ({ key, project_id: projectId } = await t.key('acme', 'stream'));
});
after(async () => {
  await t?.stop();
  await origin?.close();
  await s3?.close();
});

async function get(url: string) {
  const res = await request(url, { dispatcher: t.agent });
  return { status: res.statusCode, type: res.headers['content-type'], text: await res.body.text() };
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
});
