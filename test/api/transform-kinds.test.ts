import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { probeFile } from '../../src/media/index.js';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';

let t: TestServer;
let origin: Origin;
let key: string;
let dir: string;
const inputs: Record<string, any> = {};
const NO_LIMITS = { maxPixels: Number.MAX_SAFE_INTEGER, maxDurationSeconds: Number.MAX_SAFE_INTEGER };

before(async () => {
  origin = await startOrigin();
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host, MEDIAD_WORKER_CONCURRENCY: '2' });
  key = (await t.key('kinds', 'main')).key;
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-kinds-'));
  for (const name of ['video-mp4', 'video-noaudio-mp4', 'image-png', 'audio-mp3']) {
    const res = await t.call('POST', '/files', { key, body: { url: origin.url(`/fixtures/${name}`) } });
    assert.equal(res.status, 201, res.text);
    inputs[name] = res.json.data;
  }
});
after(async () => {
  await t.stop();
  await origin.close();
  await fs.rm(dir, { recursive: true, force: true });
});

/** Runs a task to its end and returns it with its output downloaded and probed. */
async function run(body: Record<string, unknown>) {
  const created = await t.call('POST', '/tasks', { key, body });
  assert.equal(created.status, 201, created.text);
  const task = await waitForTask(t, key, created.json.data.id);
  if (task.status !== 'completed') return { task, file: null, probe: null, local: null };
  const local = path.join(dir, task.output.id);
  const res = await request(task.output.url, { dispatcher: t.agent });
  assert.equal(res.statusCode, 200);
  await fs.writeFile(local, Buffer.from(await res.body.arrayBuffer()));
  const file = (await t.call('GET', `/files/${task.output.id}`, { key })).json.data;
  const probe = task.output.kind === 'thumbnails' ? null : await probeFile(local, NO_LIMITS);
  return { task, file, probe, local };
}

describe('video', () => {
  it('transcodes to WebM/VP9 with Opus at a new width, aspect kept', async () => {
    const { task, probe, file } = await run({
      kind: 'video',
      file_id: inputs['video-mp4'].id,
      format: 'webm',
      width: 160,
      ref: 'small',
    });
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    assert.equal(probe!.format, 'webm');
    assert.equal(probe!.videoCodec, 'vp9');
    assert.equal(probe!.audioCodec, 'opus');
    assert.deepEqual([probe!.width, probe!.height], [160, 120]);
    assert.ok(Math.abs(probe!.duration! - 2) < 0.2);
    assert.equal(file.media_id, inputs['video-mp4'].media_id, 'the output joins the input’s media');
    assert.match(file.type, /^video\/webm;codecs=vp09,opus$/);
    const media = (await t.call('GET', `/media/${file.media_id}`, { key })).json.data;
    assert.equal(media.urls.small, file.url);
  });

  it('trims, covers a square and keeps H.264 in MP4 with faststart', async () => {
    const { task, probe, local } = await run({
      kind: 'video',
      file_id: inputs['video-mp4'].id,
      width: 100,
      height: 100,
      fit: 'cover',
      start: 0.5,
      end: 1.5,
      quality: 'high',
    });
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    assert.equal(probe!.videoCodec, 'h264');
    assert.deepEqual([probe!.width, probe!.height], [100, 100]);
    assert.ok(Math.abs(probe!.duration! - 1) < 0.2, `duration ${probe!.duration}`);
    const head = (await fs.readFile(local!)).subarray(0, 64).toString('latin1');
    assert.ok(
      head.indexOf('moov') !== -1 ||
        (await fs.readFile(local!)).indexOf('moov') < (await fs.readFile(local!)).indexOf('mdat'),
      'moov before mdat',
    );
  });

  it('drops audio only when the source has none', async () => {
    const { probe } = await run({ kind: 'video', file_id: inputs['video-noaudio-mp4'].id, codec: 'h265' });
    assert.equal(probe!.videoCodec, 'hevc');
    assert.equal(probe!.hasAudio, false);
  });

  it('reports progress while it runs', async () => {
    const big = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/video-1080p-10s') } })).json
      .data;
    const task = (
      await t.call('POST', '/tasks', {
        key,
        body: { kind: 'video', file_id: big.id, height: 720, preset: 'ultrafast' },
      })
    ).json.data;
    const seen = new Set<number>();
    for (;;) {
      const cur = (await t.call('GET', `/tasks/${task.id}`, { key })).json.data;
      seen.add(cur.progress);
      if (['completed', 'failed'].includes(cur.status)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(
      [...seen].some((p) => p > 0 && p < 100),
      `progress values seen: ${[...seen].join(',')}`,
    );
    assert.ok(seen.has(100));
  });
});

describe('image', () => {
  it('resizes and converts an image; one dimension keeps the aspect ratio', async () => {
    const { task, probe } = await run({
      kind: 'image',
      file_id: inputs['image-png'].id,
      width: 32,
      format: 'webp',
      quality: 70,
    });
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    assert.equal(probe!.format, 'webp');
    assert.deepEqual([probe!.width, probe!.height], [32, 24]);
  });

  it('takes a poster frame of a video as JPEG by default', async () => {
    const { task, probe } = await run({ kind: 'image', file_id: inputs['video-mp4'].id, start: 1, ref: 'poster' });
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    assert.equal(probe!.format, 'jpeg');
    assert.deepEqual([probe!.width, probe!.height], [320, 240]);
  });

  it('fetches a url input into a new media first, then processes it', async () => {
    const { task, file } = await run({
      kind: 'image',
      url: origin.url('/fixtures/image-jpeg'),
      width: 64,
      height: 64,
      fit: 'cover',
    });
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    assert.match(task.input.id, /^file_/);
    assert.equal(file.media_id, task.input.media_id);
    const media = (await t.call('GET', `/media/${file.media_id}`, { key })).json.data;
    assert.equal(media.files.length, 2);
    assert.equal(media.urls.original, task.input.url);
  });
});

describe('audio', () => {
  it('extracts MP3 from a video', async () => {
    const { task, probe } = await run({ kind: 'audio', file_id: inputs['video-mp4'].id });
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    assert.equal(probe!.format, 'mp3');
    assert.equal(probe!.hasVideo, false);
    assert.ok(Math.abs(probe!.duration! - 2) < 0.2);
  });

  it('transcodes to mono Opus with a trim', async () => {
    const { probe } = await run({
      kind: 'audio',
      file_id: inputs['audio-mp3'].id,
      format: 'ogg',
      channels: 1,
      start: 1,
      end: 2,
    });
    assert.equal(probe!.audioCodec, 'opus');
    assert.ok(Math.abs(probe!.duration! - 1) < 0.2);
  });

  it('fails at once with no_audio_stream for a silent video', async () => {
    const { task } = await run({ kind: 'audio', file_id: inputs['video-noaudio-mp4'].id });
    assert.equal(task.status, 'failed');
    assert.equal(task.error_code, 'no_audio_stream');
    assert.equal(task.attempts, 1);
  });
});

describe('thumbnails', () => {
  it('makes a WebVTT storyboard whose cues point into a served sprite sheet', async () => {
    const { task, file, local } = await run({
      kind: 'thumbnails',
      file_id: inputs['video-mp4'].id,
      count: 4,
      width: 80,
      columns: 2,
    });
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    assert.equal(file.kind, 'thumbnails');
    assert.equal(file.type, 'text/vtt');
    const vtt = await fs.readFile(local!, 'utf8');
    assert.match(vtt, /^WEBVTT/);
    const cues = [...vtt.matchAll(/(\S+)#xywh=(\d+),(\d+),(\d+),(\d+)/g)];
    assert.equal(cues.length, 4);
    const sprite = await request(cues[0]![1]!, { dispatcher: t.agent });
    assert.equal(sprite.statusCode, 200);
    assert.equal(sprite.headers['content-type'], 'image/jpeg');
    const spriteProbe = path.join(dir, 'sprite.jpg');
    await fs.writeFile(spriteProbe, Buffer.from(await sprite.body.arrayBuffer()));
    const p = await probeFile(spriteProbe, NO_LIMITS);
    assert.deepEqual([p.width, p.height], [160, 120], '2 columns x 2 rows of 80x60 tiles');
    const delivered = await t.call('GET', file.url);
    assert.equal(delivered.headers['content-type'], 'text/vtt');
  });
});

describe('bad options get a 400 and create nothing', () => {
  it('checks types, ranges, unknown options and combinations per kind', async () => {
    const id = inputs['video-mp4'].id;
    const cases: [Record<string, unknown>, string][] = [
      [{ kind: 'video', file_id: id, format: 'mp4', codec: 'vp9' }, 'codec'],
      [{ kind: 'video', file_id: id, start: 2, end: 1 }, 'end'],
      [{ kind: 'video', file_id: id, width: '100' }, 'width'],
      [{ kind: 'video', file_id: id, quality: 0 }, 'quality'],
      [{ kind: 'video', file_id: id, frames: 3 }, 'frames'],
      [{ kind: 'image', file_id: id, format: 'bmp' }, 'format'],
      [{ kind: 'image', file_id: id, width: 0 }, 'width'],
      [{ kind: 'audio', file_id: id, format: 'ogg', sample_rate: 44100 }, 'sample_rate'],
      [{ kind: 'thumbnails', file_id: id, count: 0 }, 'count'],
    ];
    for (const [body, field] of cases) {
      const res = await t.call('POST', '/tasks', { key, body });
      assert.equal(res.status, 400, `${JSON.stringify(body)} -> ${res.text}`);
      assert.ok(
        res.json.error.details.some((d: any) => d.field === field),
        `${field} in ${JSON.stringify(res.json.error.details)}`,
      );
    }
    const other = (await t.key('kinds', 'other')).key;
    assert.equal((await t.call('POST', '/tasks', { key: other, body: { kind: 'video', file_id: id } })).status, 404);
  });
});

describe('cancellation', () => {
  it('stops the running FFmpeg process', async () => {
    const big = (
      await t.call('POST', '/files', {
        key,
        body: { url: origin.url('/fixtures/video-1080p-10s'), filename: 'cancel-me.mp4' },
      })
    ).json.data;
    const task = (
      await t.call('POST', '/tasks', { key, body: { kind: 'video', file_id: big.id, codec: 'h265', preset: 'slow' } })
    ).json.data;
    const ffmpegFor = () =>
      execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes('ffmpeg') && l.includes(`task-${task.id}`));
    const deadline = Date.now() + 15_000;
    while (ffmpegFor().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(ffmpegFor().length > 0, 'ffmpeg started');
    assert.equal((await t.call('POST', `/tasks/${task.id}/cancel`, { key })).json.data.status, 'cancelled');
    const gone = Date.now() + 5_000;
    while (ffmpegFor().length > 0 && Date.now() < gone) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(ffmpegFor(), []);
    assert.equal((await t.call('GET', `/tasks/${task.id}`, { key })).json.data.output, null);
  });
});
