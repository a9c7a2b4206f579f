import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import {
  buildVideoArgs,
  codecAllowedIn,
  defaultCodecFor,
  expectedDuration,
  grabVideoFrame,
  isMediaTransformError,
  mediaBinaries,
  probeFile,
  runFfmpeg,
  runProcess,
  videoFilters,
  type ProbeResult,
  type VideoOptions,
} from '../../src/media/index.js';
import { fixture, type FixtureName } from '../helpers/fixtures.js';

const LIMITS = { maxPixels: 100_000_000, maxDurationSeconds: 3600 };
const BASE: VideoOptions = {
  format: 'mp4',
  codec: 'h264',
  fit: 'contain',
  position: 'center',
  background: '#000000',
  quality: 60,
};
const SRC: ProbeResult = {
  kind: 'video',
  format: 'mp4',
  extension: 'mp4',
  mime: 'video/mp4',
  width: 320,
  height: 240,
  duration: 2,
  hasVideo: true,
  hasAudio: true,
};
const filters = (o: Partial<VideoOptions>, src: Partial<ProbeResult> = SRC) => videoFilters({ ...BASE, ...o }, src);
const args = (o: Partial<VideoOptions>, src: ProbeResult = SRC) =>
  buildVideoArgs('/in/a.mp4', '/out/b', { ...BASE, ...o }, src);
const after1 = (a: string[], flag: string) => a[a.indexOf(flag) + 1];

function throwsCode(fn: () => unknown, code: string): void {
  assert.throws(fn, (e: unknown) => isMediaTransformError(e) && e.code === code);
}

describe('video arguments', () => {
  it('builds one filter chain per fit, with even sizes and square pixels', () => {
    assert.equal(
      filters({ width: 200, height: 200, background: '#FF8800' }),
      'scale=200:200:force_original_aspect_ratio=decrease:force_divisible_by=2,pad=200:200:(ow-iw)/2:(oh-ih)/2:color=0xff8800,setsar=1',
    );
    assert.equal(
      filters({ width: 200, height: 100, fit: 'cover', position: 'top_left' }),
      'scale=200:100:force_original_aspect_ratio=increase,crop=200:100:0:0,setsar=1',
    );
    assert.equal(
      filters({ width: 200, height: 100, fit: 'cover', position: 'bottom_right' }),
      'scale=200:100:force_original_aspect_ratio=increase,crop=200:100:iw-ow:ih-oh,setsar=1',
    );
    assert.match(filters({ width: 200, height: 100, position: 'right' }), /pad=200:100:ow-iw:\(oh-ih\)\/2:/);
    assert.equal(filters({ width: 201, height: 99, fit: 'fill' }), 'scale=202:100,setsar=1');
    assert.equal(filters({ width: 161 }), 'scale=162:-2,setsar=1');
    assert.equal(filters({ height: 120, fps: 12 }), 'fps=12,scale=-2:120,setsar=1');
    assert.equal(filters({}), '');
    assert.equal(filters({}, { width: 321, height: 240 }), 'scale=trunc(iw/2)*2:trunc(ih/2)*2');
  });

  it('seeks before the input and limits the length after it', () => {
    const a = args({ start: 0.5, end: 1.75 });
    assert.ok(a.indexOf('-ss') < a.indexOf('-i'));
    assert.ok(a.indexOf('-t') > a.indexOf('-i'));
    assert.equal(after1(a, '-ss'), '0.500');
    assert.equal(after1(a, '-t'), '1.250');
    assert.equal(after1(a, '-i'), 'file:/in/a.mp4');
    assert.equal(a.at(-1), 'file:/out/b');
    assert.ok(!args({}).includes('-ss') && !args({}).includes('-t'));
    assert.deepEqual(args({}).slice(0, 8), [
      '-hide_banner',
      '-nostdin',
      '-y',
      '-loglevel',
      'error',
      '-progress',
      'pipe:1',
      '-nostats',
    ]);
  });

  it('sets codec and container flags', () => {
    const h264 = args({});
    assert.equal(after1(h264, '-c:v'), 'libx264');
    assert.equal(after1(h264, '-preset'), 'veryfast');
    assert.equal(after1(h264, '-crf'), '26');
    assert.equal(after1(h264, '-pix_fmt'), 'yuv420p');
    assert.equal(after1(h264, '-c:a'), 'aac');
    assert.equal(after1(h264, '-movflags'), '+faststart');
    assert.equal(after1(h264, '-f'), 'mp4');
    assert.equal(after1(args({ codec: 'h265', format: 'mov' }), '-tag:v'), 'hvc1');
    const vp9 = args({ format: 'webm', codec: 'vp9' });
    assert.equal(after1(vp9, '-b:v'), '0');
    assert.equal(after1(vp9, '-c:a'), 'libopus');
    assert.ok(!vp9.includes('-movflags'));
    assert.equal(after1(args({ format: 'webm', codec: 'vp9', bitrate: 500_000 }), '-b:v'), '500000');
    const av1 = args({ codec: 'av1', bitrate: 1_000_000 });
    assert.deepEqual(
      [after1(av1, '-c:v'), after1(av1, '-preset'), after1(av1, '-maxrate'), after1(av1, '-bufsize')],
      ['libsvtav1', '8', '1000000', '2000000'],
    );
    const silent = args({}, { ...SRC, hasAudio: false });
    assert.ok(silent.includes('-an') && !silent.includes('-c:a'));
    assert.deepEqual(h264.slice(h264.indexOf('-map'), h264.indexOf('-map') + 2), ['-map', '0:V:0']);
    assert.ok(h264.includes('0:a:0?'));
  });

  it('knows which codecs each container takes', () => {
    assert.deepEqual(
      [defaultCodecFor('mp4'), defaultCodecFor('mov'), defaultCodecFor('webm')],
      ['h264', 'h264', 'vp9'],
    );
    assert.ok(
      codecAllowedIn('mp4', 'av1') &&
        codecAllowedIn('webm', 'av1') &&
        !codecAllowedIn('webm', 'h264') &&
        !codecAllowedIn('mov', 'vp9'),
    );
    assert.throws(() => args({ format: 'webm', codec: 'h264' }), RangeError);
  });

  it('rejects inputs and windows it cannot serve', () => {
    throwsCode(() => args({}, { ...SRC, kind: 'audio', hasVideo: false }), 'invalid_for_input');
    throwsCode(() => args({ start: 2 }), 'invalid_for_input');
    throwsCode(() => args({ start: 1, end: 1 }), 'invalid_for_input');
    assert.throws(() => args({ width: 10, height: 10, background: 'red,drawtext' }), RangeError);
    assert.throws(() => args({ preset: 'placebo' }), RangeError);
  });

  it('predicts the output length', () => {
    assert.equal(expectedDuration({}, SRC), 2);
    assert.equal(expectedDuration({ start: 0.5 }, SRC), 1.5);
    assert.equal(expectedDuration({ start: 0.5, end: 9 }, SRC), 1.5);
    assert.equal(expectedDuration({ end: 1 }, { duration: undefined }), 1);
  });
});

describe('video transform (ffmpeg)', () => {
  let dir = '';
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'mediad-video-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  async function transform(
    name: FixtureName,
    o: Partial<VideoOptions>,
    progress?: number[],
  ): Promise<ProbeResult & { path: string }> {
    const input = await fixture(name);
    const source = await probeFile(input, LIMITS);
    const opts = { ...BASE, ...o };
    const out = join(dir, `${name}-${opts.codec}-${Math.random().toString(36).slice(2)}.${opts.format}`);
    await runFfmpeg(buildVideoArgs(input, out, opts, source, LIMITS), {
      timeoutMs: 60_000,
      expectedDurationSeconds: expectedDuration(opts, source),
      onProgress: (p) => progress?.push(p),
    });
    return { ...(await probeFile(out, LIMITS)), path: out };
  }

  it('h264 mp4, cover to an exact size, with audio and progress', async () => {
    const progress: number[] = [];
    const out = await transform('video-mp4', { width: 160, height: 160, fit: 'cover' }, progress);
    assert.deepEqual(
      [out.format, out.videoCodec, out.audioCodec, out.width, out.height],
      ['mp4', 'h264', 'aac', 160, 160],
    );
    assert.ok(Math.abs(out.duration! - 2) <= 0.2, String(out.duration));
    assert.equal(progress.at(-1), 100);
    assert.ok(
      progress.every((v, i) => i === 0 || v > progress[i - 1]!),
      progress.join(),
    );
  });

  it('h265 in mov, width only keeps the aspect ratio, tagged hvc1', async () => {
    const out = await transform('video-mp4', { format: 'mov', codec: 'h265', width: 160 });
    assert.deepEqual([out.format, out.videoCodec, out.width, out.height], ['mov', 'hevc', 160, 120]);
    const { stdout } = await runProcess(
      mediaBinaries().ffprobe,
      ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=codec_tag_string', '-of', 'csv=p=0', out.path],
      { timeoutMs: 10_000 },
    );
    assert.equal(stdout.toString().trim(), 'hvc1');
  });

  it('applies the source rotation once', async () => {
    const out = await transform('video-rotated-mp4', { width: 120 });
    assert.deepEqual([out.width, out.height], [120, 160]);
  });

  it('vp9 + opus in webm, trimmed', async () => {
    const out = await transform('video-mp4', { format: 'webm', codec: 'vp9', start: 0.5, end: 1.5, width: 160 });
    assert.deepEqual([out.format, out.videoCodec, out.audioCodec], ['webm', 'vp9', 'opus']);
    assert.ok(Math.abs(out.duration! - 1) <= 0.2, String(out.duration));
  });

  it('av1 in mp4 on a short clip; a silent source gives a silent output', async () => {
    const out = await transform('video-noaudio-mp4', { codec: 'av1', end: 0.5, width: 160, preset: '12' });
    assert.deepEqual([out.videoCodec, out.hasAudio, out.width, out.height], ['av1', false, 160, 120]);
    assert.ok(Math.abs(out.duration! - 0.5) <= 0.2, String(out.duration));
  });

  it('webm input, contain pads with the background colour', async () => {
    const out = await transform('video-webm', { width: 240, height: 240, background: '#ff0000' });
    assert.deepEqual([out.width, out.height], [240, 240]);
    // 320x240 fits as 240x180: 30 px bands of background above and below.
    const png = join(dir, 'contain.png');
    await grabVideoFrame(out.path, 0.5, png, { timeoutMs: 20_000 }, LIMITS);
    const { data } = await sharp(png)
      .extract({ left: 0, top: 0, width: 240, height: 20 })
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const mean = [0, 1, 2].map((c) => data.reduce((s, v, i) => (i % 3 === c ? s + v : s), 0) / (data.length / 3));
    assert.ok(mean[0]! > 220 && mean[1]! < 40 && mean[2]! < 40, mean.join());
  });
});
