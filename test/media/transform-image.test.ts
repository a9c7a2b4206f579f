import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { isAppError } from '../../src/errors.js';
import {
  defaultFrameTime,
  grabVideoFrame,
  imageOutputFormat,
  isMediaTransformError,
  parseBackground,
  transformImage,
  videoFrameArgs,
  type ImageOptions,
} from '../../src/media/index.js';
import { fixture, type FixtureName } from '../helpers/fixtures.js';

const BASE: ImageOptions = { fit: 'cover', position: 'center', background: '#000000', format: 'webp', quality: 80 };
const CTX = { maxPixels: 100_000_000 };
const LIMIT = { maxDurationSeconds: 3600 };

describe('image helpers', () => {
  it('parses #rrggbb and #rrggbbaa backgrounds, refuses anything else', () => {
    assert.deepEqual(parseBackground('#FF8000'), { r: 255, g: 128, b: 0, alpha: 1 });
    assert.deepEqual(parseBackground('#00000000'), { r: 0, g: 0, b: 0, alpha: 0 });
    assert.throws(() => parseBackground('red'), RangeError);
  });

  it('names output formats', () => {
    assert.deepEqual(imageOutputFormat('jpeg'), { extension: 'jpg', mime: 'image/jpeg' });
    assert.deepEqual(imageOutputFormat('avif'), { extension: 'avif', mime: 'image/avif' });
  });

  it('picks a poster frame time and seeks before the input', () => {
    assert.deepEqual([defaultFrameTime(10), defaultFrameTime(2), defaultFrameTime(undefined)], [1, 0, 0]);
    const a = videoFrameArgs('/in/v.mp4', 1.5, '/out/f.png');
    assert.ok(a.indexOf('-ss') < a.indexOf('-i'));
    assert.deepEqual(
      [a[a.indexOf('-ss') + 1], a[a.indexOf('-frames:v') + 1], a.at(-1)],
      ['1.500', '1', 'file:/out/f.png'],
    );
    assert.ok(!a.includes('-vf'), 'full resolution');
  });
});

describe('image transform (sharp)', () => {
  let dir = '';
  let n = 0;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'mediad-image-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  async function transform(name: FixtureName, o: Partial<ImageOptions>) {
    const opts = { ...BASE, ...o };
    const out = join(dir, `${name}-${n++}.${imageOutputFormat(opts.format).extension}`);
    const res = await transformImage(await fixture(name), out, opts, CTX);
    return { res, out, meta: await sharp(out).metadata() };
  }

  async function pixel(path: string, left: number, top: number): Promise<number[]> {
    const { data, info } = await sharp(path)
      .extract({ left, top, width: 1, height: 1 })
      .raw()
      .toBuffer({ resolveWithObject: true });
    return [...data.subarray(0, info.channels)];
  }

  it('resizes a JPEG to WebP keeping the aspect ratio and dropping metadata', async () => {
    const { res, meta } = await transform('image-jpeg', { width: 320 });
    assert.deepEqual(res, { width: 320, height: 240, format: 'webp', mime: 'image/webp', size: res.size });
    assert.deepEqual([meta.format, meta.width, meta.height, meta.exif], ['webp', 320, 240, undefined]);
  });

  it('applies EXIF orientation', async () => {
    const { res, meta } = await transform('image-jpeg-exif-rotated', { width: 240, format: 'jpeg' });
    assert.deepEqual([res.width, res.height, meta.width, meta.height], [240, 320, 240, 320]);
    assert.equal(meta.orientation, undefined);
  });

  it('gives exact sizes for cover, contain and fill; inside/outside keep the ratio', async () => {
    const size = async (o: Partial<ImageOptions>) =>
      (await transform('image-jpeg', { width: 200, height: 100, ...o })).res;
    for (const fit of ['cover', 'contain', 'fill'] as const) {
      const r = await size({ fit });
      assert.deepEqual([r.width, r.height], [200, 100], fit);
    }
    const inside = await size({ fit: 'inside' });
    const outside = await size({ fit: 'outside' });
    assert.deepEqual([inside.width, inside.height, outside.width, outside.height], [133, 100, 200, 150]);
  });

  it('pads contain with the background, at the position asked for', async () => {
    // 640x480 in 200x100 is 133x100: a 67 px band on the right when placed left.
    const { out } = await transform('image-jpeg', {
      fit: 'contain',
      width: 200,
      height: 100,
      position: 'left',
      background: '#00ff00',
      format: 'png',
    });
    const [r, g, b] = await pixel(out, 195, 50);
    assert.ok(r! < 10 && g! > 245 && b! < 10, `${r},${g},${b}`);
    const { out: alpha } = await transform('image-png', {
      fit: 'contain',
      width: 100,
      height: 100,
      background: '#ff000080',
      format: 'png',
    });
    assert.deepEqual(await pixel(alpha, 50, 2), [255, 0, 0, 128]);
  });

  it('keeps animation for gif and webp, takes the first frame otherwise', async () => {
    const gif = await transform('image-gif-animated', { format: 'gif', width: 80, height: 60 });
    assert.deepEqual([gif.res.frames, gif.res.width, gif.res.height, gif.meta.pages], [10, 80, 60, 10]);
    const webp = await transform('image-gif-animated', { format: 'webp', width: 80, height: 80 });
    assert.deepEqual([webp.res.frames, webp.res.height, webp.meta.pages], [10, 80, 10]);
    const png = await transform('image-gif-animated', { format: 'png' });
    assert.deepEqual([png.res.frames, png.res.width, png.res.height, png.meta.pages], [undefined, 160, 120, undefined]);
  });

  it('encodes AVIF and JPEG with quality', async () => {
    const avif = await transform('image-png', { format: 'avif', quality: 50 });
    assert.equal(avif.meta.compression, 'av1');
    const lo = await transform('image-jpeg', { format: 'jpeg', quality: 20 });
    const hi = await transform('image-jpeg', { format: 'jpeg', quality: 95 });
    assert.ok(lo.res.size < hi.res.size);
  });

  it('maps the pixel limit and broken files to errors', async () => {
    const jpeg = await fixture('image-jpeg');
    const limited = await transformImage(jpeg, join(dir, 'l.webp'), BASE, { maxPixels: 1000 }).catch((e: unknown) => e);
    assert.ok(isAppError(limited) && limited.code === 'media_limit_exceeded', String(limited));
    const broken = join(dir, 'broken.jpg');
    await writeFile(broken, Buffer.from('not an image at all'));
    const failed = await transformImage(broken, join(dir, 'b.webp'), BASE, CTX).catch((e: unknown) => e);
    assert.ok(isMediaTransformError(failed) && failed.code === 'transform_failed', String(failed));
    assert.doesNotMatch(failed.message, new RegExp(dir));
  });
});

describe('video frames for image tasks', () => {
  it('grabs a full-resolution frame, and refuses a time past the end', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mediad-frame-'));
    try {
      const png = join(dir, 'f.png');
      await grabVideoFrame(await fixture('video-mp4'), 1, png, { timeoutMs: 20_000 }, LIMIT);
      const res = await transformImage(png, join(dir, 'poster.jpg'), { ...BASE, format: 'jpeg', width: 160 }, CTX);
      assert.deepEqual([res.width, res.height], [160, 120]);
      assert.deepEqual(
        await sharp(png)
          .metadata()
          .then((m) => [m.width, m.height]),
        [320, 240],
      );
      const err = await grabVideoFrame(await fixture('video-mp4'), 30, png, { timeoutMs: 20_000 }, LIMIT).catch(
        (e: unknown) => e,
      );
      assert.ok(isMediaTransformError(err) && err.code === 'invalid_for_input', String(err));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
