import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { isAppError } from '../../src/errors.js';
import { averageColor, probeFile, type ProbeResult } from '../../src/media/index.js';
import { fixture, SOLID_PNG_COLOR, type FixtureName } from '../helpers/fixtures.js';

const LIMITS = { maxPixels: 100_000_000, maxDurationSeconds: 3600 };
const HEX = /^#[0-9a-f]{6}$/;

function rgb(hex: string): number[] {
  assert.match(hex, HEX);
  return [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
}

function assertClose(actual: string | null, expected: string, tolerance: number): void {
  assert.ok(actual !== null, 'expected a colour');
  const a = rgb(actual);
  const e = rgb(expected);
  assert.ok(
    a.every((v, i) => Math.abs(v - e[i]!) <= tolerance),
    `${actual} is not within ${tolerance} of ${expected}`,
  );
}

async function colorOf(name: FixtureName): Promise<string | null> {
  const path = await fixture(name);
  return averageColor(path, await probeFile(path, LIMITS), { maxPixels: LIMITS.maxPixels });
}

describe('averageColor', () => {
  let dir = '';
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'mediad-color-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  it('gives the exact colour of a solid image', async () => {
    assertClose(await colorOf('image-png'), SOLID_PNG_COLOR, 1);
  });

  it('gives lowercase #rrggbb for every image format', async () => {
    for (const name of [
      'image-jpeg',
      'image-jpeg-exif-rotated',
      'image-webp',
      'image-avif',
      'image-tiff',
      'image-gif-animated',
    ] as const) {
      assert.match((await colorOf(name)) ?? '', HEX, name);
    }
  });

  it('flattens transparency onto white', async () => {
    const clear = join(dir, 'clear.png');
    const halfRed = join(dir, 'half-red.png');
    await sharp({ create: { width: 32, height: 32, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
      .png()
      .toFile(clear);
    await sharp({ create: { width: 32, height: 32, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 0.5 } } })
      .png()
      .toFile(halfRed);
    const probe = await probeFile(clear, LIMITS);
    assert.equal(await averageColor(clear, probe), '#ffffff');
    assertClose(await averageColor(halfRed, probe), '#ff8080', 2);
  });

  it('reads the colour of a video frame', async () => {
    // H.264 4:2:0 in limited range shifts a solid colour by a few levels.
    assertClose(await colorOf('video-solid-mp4'), SOLID_PNG_COLOR, 4);
    for (const name of ['video-mp4', 'video-webm', 'video-mov'] as const)
      assert.match((await colorOf(name)) ?? '', HEX, name);
  });

  it('falls back to the first frame when the header duration is longer than the video', async () => {
    const path = await fixture('video-solid-mp4'); // 0.5 s long
    const probe = await probeFile(path, LIMITS);
    assertClose(await averageColor(path, { ...probe, duration: 60 }), SOLID_PNG_COLOR, 4);
  });

  it('returns null for audio, including audio with cover art', async () => {
    assert.equal(await colorOf('audio-mp3'), null);
    assert.equal(await colorOf('audio-mp3-cover'), null);
  });

  it('respects the pixel limit for images (sharp refuses from the header)', async () => {
    const path = await fixture('image-huge-header-truncated');
    const probe: ProbeResult = {
      kind: 'image',
      format: 'png',
      extension: 'png',
      mime: 'image/png',
      width: 30_000,
      height: 30_000,
      hasVideo: false,
      hasAudio: false,
    };
    const err = await averageColor(path, probe, { maxPixels: 100_000_000 }).catch((e: unknown) => e);
    assert.ok(isAppError(err) && err.code === 'media_limit_exceeded', String(err));
  });

  it('respects the pixel limit for videos without running ffmpeg', async () => {
    const path = await fixture('video-mp4');
    const probe = await probeFile(path, LIMITS);
    const err = await averageColor(path, probe, { maxPixels: 1000 }).catch((e: unknown) => e);
    assert.ok(isAppError(err) && err.code === 'media_limit_exceeded', String(err));
    assert.match(err.message, /320x240/);
  });

  it('refuses an image whose pixel data cannot be decoded', async () => {
    const path = await fixture('image-huge-header-truncated');
    const probe: ProbeResult = {
      kind: 'image',
      format: 'png',
      extension: 'png',
      mime: 'image/png',
      hasVideo: false,
      hasAudio: false,
    };
    const err = await averageColor(path, probe, { maxPixels: 1e9 }).catch((e: unknown) => e);
    assert.ok(isAppError(err) && err.code === 'media_unsupported', String(err));
  });
});
