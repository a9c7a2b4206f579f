// Hardening issue, points 3, 7 and 8, over HTTPS: the lying Matroska file (header 10 s, 300 s of
// media) is refused at ingest under MEDIAD_MAX_DURATION_SECONDS=60, and a task on a stored file
// whose probe trusted that header (as files ingested before this change have) never outputs
// more than 60 s: it fails with media_limit_exceeded.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { fixture } from '../helpers/fixtures.js';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';

let origin: Origin;
before(async () => (origin = await startOrigin()));
after(async () => origin.close());

async function server(env: Record<string, string>): Promise<{ t: TestServer; key: string }> {
  const t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host, MEDIAD_WORKER_CONCURRENCY: '2', ...env });
  return { t, key: (await t.key('limits', 'main')).key };
}

async function runTask(t: TestServer, key: string, body: Record<string, unknown>) {
  const created = await t.call('POST', '/tasks', { key, body });
  assert.equal(created.status, 201, created.text);
  return waitForTask(t, key, created.json.data.id);
}

describe('MEDIAD_MAX_DURATION_SECONDS=60, MEDIAD_MAX_FRAMES=1000', () => {
  let t: TestServer;
  let key: string;
  before(async () => ({ t, key } = await server({ MEDIAD_MAX_DURATION_SECONDS: '60', MEDIAD_MAX_FRAMES: '1000' })));
  after(async () => t.stop());

  const post = (name: string) => t.call('POST', '/files', { key, body: { url: origin.url(`/fixtures/${name}`) } });

  it('POST /files refuses the lying MKV, naming the limit and the variable', async () => {
    const res = await post('video-mkv-lying-duration');
    assert.equal(res.status, 422, res.text);
    assert.equal(res.json.data, null);
    assert.equal(res.json.error.code, 'media_limit_exceeded');
    assert.match(
      res.json.error.message,
      /^the video goes on past .* \(its header says 10 s\); the limit is 1 min \(MEDIAD_MAX_DURATION_SECONDS\)$/,
    );
    const live = await post('video-mkv-no-duration');
    assert.equal(live.json.error.code, 'media_limit_exceeded', live.text);
  });

  it('POST /tasks on the lying MKV by URL fails the same way, with nothing stored', async () => {
    const task = await runTask(t, key, { kind: 'video', url: origin.url('/fixtures/video-mkv-lying-duration') });
    assert.equal(task.status, 'failed');
    assert.equal(task.error_code, 'media_limit_exceeded', JSON.stringify(task.error));
    assert.equal(task.attempts, 1, 'not retried');
    assert.equal((await t.call('GET', '/files', { key })).json.meta.total, 0);
  });

  it('refuses a video whose frame size cannot be determined (60000x60000 rawvideo)', async () => {
    const huge = await post('video-mkv-undecodable-size');
    assert.equal(huge.status, 422, huge.text);
    assert.equal(huge.json.error.code, 'media_unsupported');
  });

  it('refuses a GIF of 200,000 frames of 1x1 by MEDIAD_MAX_FRAMES', async () => {
    const gif = await post('image-gif-200k-frames');
    assert.equal(gif.status, 422, gif.text);
    assert.equal(gif.json.error.code, 'media_limit_exceeded');
    assert.equal(gif.json.error.message, 'the animated image has 200000 frames; the limit is 1000 (MEDIAD_MAX_FRAMES)');
  });

  describe('a stored file whose probe trusted the header', () => {
    let fileId = '';
    before(async () => {
      // An honest 10 s file of the same layout is probed and stored as the liar used to be; its
      // bytes are then replaced by the liar's through the blob store (the state of a file
      // ingested before the probe looked past the header).
      const res = await post('video-mkv-tiny-10s');
      assert.equal(res.status, 201, res.text);
      assert.ok(Math.abs(res.json.data.duration - 10) < 0.1);
      fileId = res.json.data.id;
      const { deps } = t.server.runtime;
      const row = await deps.db
        .selectFrom('files')
        .select('blob_key')
        .where('id', '=', fileId)
        .executeTakeFirstOrThrow();
      const copy = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-liar-')), 'liar.mkv');
      await fs.copyFile(await fixture('video-mkv-lying-duration'), copy);
      await deps.blobs.putFile(row.blob_key, copy);
    });

    for (const body of [
      { kind: 'video', width: 32 },
      { kind: 'audio', format: 'mp3' },
    ]) {
      it(`${body.kind}: stops at the limit and fails with media_limit_exceeded instead of storing a cut output`, async () => {
        const task = await runTask(t, key, { ...body, file_id: fileId });
        assert.equal(task.status, 'failed');
        assert.equal(task.error_code, 'media_limit_exceeded', JSON.stringify(task.error));
        assert.match(
          task.error,
          /goes on past 1 min \(its header says 10 s\); the limit is 1 min \(MEDIAD_MAX_DURATION_SECONDS\)/,
        );
        assert.equal(task.output, null);
      });
    }

    it('image: a frame time past the limit is refused', async () => {
      const task = await runTask(t, key, { kind: 'image', file_id: fileId, start: 100 });
      assert.equal(task.status, 'failed');
      assert.equal(task.error_code, 'media_limit_exceeded', JSON.stringify(task.error));
    });

    it('thumbnails: the storyboard covers the 10 s the probe knows, nothing past the limit', async () => {
      const task = await runTask(t, key, { kind: 'thumbnails', file_id: fileId, count: 5 });
      assert.equal(task.status, 'completed', JSON.stringify(task.error));
      const vtt = await (await request(task.output.url, { dispatcher: t.agent })).body.text();
      assert.match(vtt.trimEnd(), /--> 00:00:10\.\d{3}\n\S+#xywh=[\d,]+$/);
    });
  });
});

describe('MEDIAD_MAX_DURATION_SECONDS=400', () => {
  it('stores the lying MKV with the 300 s it holds, not the 10 s it declares', async () => {
    const { t, key } = await server({ MEDIAD_MAX_DURATION_SECONDS: '400' });
    try {
      const res = await t.call('POST', '/files', {
        key,
        body: { url: origin.url('/fixtures/video-mkv-lying-duration') },
      });
      assert.equal(res.status, 201, res.text);
      assert.ok(Math.abs(res.json.data.duration - 300) < 0.1, `duration ${res.json.data.duration}`);
      const media = (await t.call('GET', `/media/${res.json.data.media_id}`, { key })).json.data;
      assert.ok(Math.abs(media.duration - 300) < 0.1, `media duration ${media.duration}`);
    } finally {
      await t.stop();
    }
  });
});
