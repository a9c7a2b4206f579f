import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import {
  buildStoryboard,
  isMediaTransformError,
  planStoryboard,
  probeFile,
  storyboardArgs,
  storyboardTiles,
  storyboardVtt,
  vttTime,
} from '../../src/media/index.js';
import { fixture } from '../helpers/fixtures.js';

const LIMITS = { maxPixels: 100_000_000, maxDurationSeconds: 3600 };
const SD = { width: 320, height: 240 };
const CUE =
  /^(\d{2}):(\d{2}):(\d{2})\.(\d{3}) --> (\d{2}):(\d{2}):(\d{2})\.(\d{3})\n(\S+)#xywh=(\d+),(\d+),(\d+),(\d+)$/;

describe('storyboard plan', () => {
  it('defaults to one tile a second, at most 100 tiles', () => {
    const short = planStoryboard(2, {}, SD);
    assert.deepEqual(short, { times: [0, 1], interval: 1, columns: 2, rows: 1, tileWidth: 160, tileHeight: 120 });
    const long = planStoryboard(1000, {}, SD);
    assert.deepEqual([long.times.length, long.interval, long.columns, long.rows], [100, 10, 10, 10]);
    assert.equal(planStoryboard(0, {}, SD).times.length, 1);
  });

  it('honours count, interval and columns', () => {
    const p = planStoryboard(60, { count: 12 }, SD);
    assert.deepEqual([p.interval, p.columns, p.rows, p.times.at(-1)], [5, 10, 2, 55]);
    assert.deepEqual(planStoryboard(10, { interval: 2.5, columns: 3 }, SD).times, [0, 2.5, 5, 7.5]);
    assert.equal(planStoryboard(10, { interval: 2.5, columns: 3 }, SD).rows, 2);
    // 0.1 s over an hour would be 36000 tiles: widened to 100.
    assert.deepEqual(
      [planStoryboard(3600, { interval: 0.1 }, SD).interval, planStoryboard(3600, { interval: 0.1 }, SD).times.length],
      [36, 100],
    );
  });

  it('takes the tile height from the source aspect, always even', () => {
    assert.equal(planStoryboard(5, { width: 100 }, SD).tileHeight, 76); // 75 rounded to even
    assert.equal(planStoryboard(5, {}, { width: 1920, height: 1080 }).tileHeight, 90);
    assert.equal(planStoryboard(5, { width: 91 }, { width: 1080, height: 1920 }).tileWidth, 92);
  });

  it('refuses a sprite too large for one image', () => {
    assert.throws(
      () => planStoryboard(100, { count: 100, width: 1920, columns: 1 }, { width: 1080, height: 1920 }),
      (e: unknown) => isMediaTransformError(e) && e.code === 'invalid_for_input',
    );
  });

  it('builds one ffmpeg run producing the sprite', () => {
    const a = storyboardArgs('/in/v.mp4', '/out/s.jpg', planStoryboard(60, { count: 12 }, SD), 'jpeg', LIMITS);
    assert.equal(a[a.indexOf('-vf') + 1], 'fps=1000/5000,scale=160:120:flags=area,setsar=1,tile=10x2:nb_frames=12');
    assert.deepEqual(
      [a[a.indexOf('-frames:v') + 1], a[a.indexOf('-c:v') + 1], a.at(-1)],
      ['1', 'mjpeg', 'file:/out/s.jpg'],
    );
  });
});

describe('storyboard VTT', () => {
  it('formats WebVTT times', () => {
    assert.deepEqual([vttTime(0), vttTime(3661.5), vttTime(59.9996)], ['00:00:00.000', '01:01:01.500', '00:01:00.000']);
  });

  it('writes one cue per tile pointing into the sprite', () => {
    const plan = planStoryboard(25, { count: 5, columns: 2 }, SD);
    const tiles = storyboardTiles(plan, 25);
    assert.deepEqual(tiles[3], { start: 15, end: 20, x: 160, y: 120, w: 160, h: 120 });
    assert.equal(
      storyboardVtt(tiles.slice(0, 2), 'https://cdn/s.jpg'),
      'WEBVTT\n\n00:00:00.000 --> 00:00:05.000\nhttps://cdn/s.jpg#xywh=0,0,160,120\n\n00:00:05.000 --> 00:00:10.000\nhttps://cdn/s.jpg#xywh=160,0,160,120\n',
    );
  });
});

describe('storyboard (ffmpeg)', () => {
  let dir = '';
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'mediad-storyboard-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  for (const [name, format] of [
    ['video-mp4', 'jpeg'],
    ['video-webm', 'webp'],
  ] as const) {
    it(`${name} → ${format} sprite and VTT`, async () => {
      const input = await fixture(name);
      const source = await probeFile(input, LIMITS);
      const progress: number[] = [];
      const out = join(dir, name);
      await mkdir(out);
      const sb = await buildStoryboard(
        input,
        out,
        { count: 4, columns: 2, width: 80, format },
        source,
        {
          timeoutMs: 30_000,
          onProgress: (p) => progress.push(p),
        },
        LIMITS,
      );
      assert.deepEqual([sb.spriteWidth, sb.spriteHeight], [160, 120]);
      const meta = await sharp(sb.spritePath).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], [format, 2 * 80, 2 * 60]);
      assert.deepEqual(progress, [100]);
      const vtt = storyboardVtt(sb.tiles, 'sprite');
      assert.ok(vtt.startsWith('WEBVTT\n\n'));
      const cues = vtt.slice('WEBVTT\n\n'.length).trimEnd().split('\n\n');
      assert.equal(cues.length, 4);
      for (const cue of cues) assert.match(cue, CUE);
      // The last cue runs to the end of the source (2 s, webm: 2.008 s).
      assert.ok(cues[3]!.endsWith(` --> ${vttTime(source.duration!)}\nsprite#xywh=80,60,80,60`), cues[3]);
      // The four tiles differ (testsrc2 moves), so frames were really taken at different times.
      const tiles = await Promise.all(
        sb.tiles.map((t) =>
          sharp(sb.spritePath).extract({ left: t.x, top: t.y, width: t.w, height: t.h }).raw().toBuffer(),
        ),
      );
      assert.equal(new Set(tiles.map((b) => b.toString('base64'))).size, 4);
    });
  }

  it('refuses an audio file', async () => {
    const input = await fixture('audio-mp3');
    const err = await buildStoryboard(
      input,
      dir,
      { format: 'jpeg' },
      await probeFile(input, LIMITS),
      { timeoutMs: 10_000 },
      LIMITS,
    ).catch((e: unknown) => e);
    assert.ok(isMediaTransformError(err) && err.code === 'invalid_for_input', String(err));
  });
});
