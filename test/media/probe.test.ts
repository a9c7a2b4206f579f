import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { isAppError, type ErrorCode } from '../../src/errors.js';
import { IMAGE_SIGNATURE_BYTES, mayBeImage } from '../../src/media/formats.js';
import {
  mediaBinaries,
  probeFile,
  ProcessError,
  setMediaBinaries,
  UNSUPPORTED_MESSAGE,
  type ProbeResult,
} from '../../src/media/index.js';
import { audioLong, fixture, fixtureInfo, type FixtureName } from '../helpers/fixtures.js';

const LIMITS = { maxPixels: 100_000_000, maxDurationSeconds: 3600 };

async function rejectsWithCode(p: Promise<unknown>, code: ErrorCode, message?: RegExp): Promise<void> {
  const err = await p.then(
    () => assert.fail(`expected ${code}`),
    (e: unknown) => e,
  );
  assert.ok(isAppError(err), `expected AppError ${code}, got ${String(err)}`);
  assert.equal(err.code, code, err.message);
  if (message) assert.match(err.message, message);
}

type Expect = Partial<ProbeResult> & Pick<ProbeResult, 'format' | 'mime' | 'extension'>;

const EXPECTED: [FixtureName, Expect][] = [
  [
    'video-mp4',
    {
      format: 'mp4',
      extension: 'mp4',
      mime: 'video/mp4',
      videoCodec: 'h264',
      audioCodec: 'aac',
      hasAudio: true,
      fps: 25,
    },
  ],
  ['video-noaudio-mp4', { format: 'mp4', extension: 'mp4', mime: 'video/mp4', hasAudio: false, hasVideo: true }],
  [
    'video-webm',
    { format: 'webm', extension: 'webm', mime: 'video/webm', videoCodec: 'vp9', audioCodec: 'opus', hasAudio: true },
  ],
  ['video-mov', { format: 'mov', extension: 'mov', mime: 'video/quicktime' }],
  ['video-mkv', { format: 'mkv', extension: 'mkv', mime: 'video/x-matroska' }],
  ['video-rotated-mp4', { format: 'mp4', extension: 'mp4', mime: 'video/mp4' }],
  [
    'audio-mp3',
    { format: 'mp3', extension: 'mp3', mime: 'audio/mpeg', audioCodec: 'mp3', hasVideo: false, hasAudio: true },
  ],
  ['audio-mp3-cover', { format: 'mp3', extension: 'mp3', mime: 'audio/mpeg', hasVideo: false, hasAudio: true }],
  ['audio-wav', { format: 'wav', extension: 'wav', mime: 'audio/wav', audioCodec: 'pcm_s16le' }],
  ['audio-m4a', { format: 'm4a', extension: 'm4a', mime: 'audio/mp4', audioCodec: 'aac' }],
  ['audio-ogg', { format: 'ogg', extension: 'ogg', mime: 'audio/ogg', audioCodec: 'opus' }],
  ['audio-flac', { format: 'flac', extension: 'flac', mime: 'audio/flac' }],
  ['image-png', { format: 'png', extension: 'png', mime: 'image/png', hasVideo: false, hasAudio: false }],
  ['image-jpeg', { format: 'jpeg', extension: 'jpg', mime: 'image/jpeg' }],
  ['image-jpeg-exif-rotated', { format: 'jpeg', extension: 'jpg', mime: 'image/jpeg' }],
  ['image-webp', { format: 'webp', extension: 'webp', mime: 'image/webp' }],
  ['image-avif', { format: 'avif', extension: 'avif', mime: 'image/avif' }],
  ['image-tiff', { format: 'tiff', extension: 'tiff', mime: 'image/tiff' }],
  ['image-gif-animated', { format: 'gif', extension: 'gif', mime: 'image/gif', frames: 10 }],
];

describe('probeFile on generated fixtures', () => {
  for (const [name, expected] of EXPECTED) {
    it(name, async () => {
      const info = fixtureInfo[name];
      const probe = await probeFile(await fixture(name), LIMITS);
      assert.equal(probe.kind, info.kind);
      for (const [key, value] of Object.entries(expected))
        assert.deepEqual(probe[key as keyof ProbeResult], value, key);
      assert.equal(probe.width, info.width, 'width');
      assert.equal(probe.height, info.height, 'height');
      if (info.duration === undefined) {
        assert.equal(probe.duration, undefined, 'images have no duration');
      } else {
        assert.ok(Math.abs((probe.duration ?? -1) - info.duration) <= 0.1, `duration ${probe.duration}`);
        assert.ok((probe.bitrate ?? 0) > 0, 'bitrate');
      }
      assert.equal(probe.hasVideo, info.kind === 'video');
    });
  }

  it('tells images from audio and video by their first bytes, before loading sharp', async () => {
    for (const [name] of EXPECTED) {
      const head = (await readFile(await fixture(name))).subarray(0, IMAGE_SIGNATURE_BYTES);
      assert.equal(mayBeImage(head), fixtureInfo[name].kind === 'image', name);
    }
    // A HEIC's ftyp (major brand heic), and an MP4 whose compatible brands name no HEIF one.
    const box = (brands: string[]) => {
      const b = Buffer.alloc(8 + brands.length * 4 + 4);
      b.writeUInt32BE(b.length, 0);
      b.write('ftyp', 4, 'latin1');
      brands.forEach((brand, i) => b.write(brand, 8 + (i === 0 ? 0 : i * 4 + 4), 'latin1'));
      return b;
    };
    assert.equal(mayBeImage(box(['heic', 'mif1', 'heic'])), true);
    assert.equal(mayBeImage(box(['mp42', 'isom', 'mp42'])), false);
    assert.equal(mayBeImage(Buffer.alloc(0)), false);
  });

  it('reports static images without a frame count', async () => {
    assert.equal((await probeFile(await fixture('image-jpeg'), LIMITS)).frames, undefined);
  });
});

describe('probeFile limits', () => {
  it('refuses an image whose header exceeds the pixel limit', async () => {
    await rejectsWithCode(
      probeFile(await fixture('image-huge-header'), LIMITS),
      'media_limit_exceeded',
      /^the image is 30000x30000 \(900 MP\); the limit is 100 MP \(MEDIAD_MAX_PIXELS\)$/,
    );
  });

  it('refuses from the header alone, before any decode', async () => {
    // Same header, pixel data cut short: any decode fails, so only a header check can say "limit".
    const path = await fixture('image-huge-header-truncated');
    await assert.rejects(
      sharp(path, { limitInputPixels: false }).resize(8).raw().toBuffer(),
      /read error|truncated|premature/i,
    );
    await rejectsWithCode(probeFile(path, LIMITS), 'media_limit_exceeded', /30000x30000/);
  });

  it('counts every frame of an animated image', async () => {
    // 160x120 = 19 200 px per frame, 10 frames = 192 000 px in all.
    const path = await fixture('image-gif-animated');
    await rejectsWithCode(
      probeFile(path, { ...LIMITS, maxPixels: 100_000 }),
      'media_limit_exceeded',
      /160x120 with 10 frames/,
    );
    assert.equal((await probeFile(path, { ...LIMITS, maxPixels: 192_000 })).frames, 10);
  });

  it('applies the pixel limit to the displayed size of EXIF-rotated images too', async () => {
    await rejectsWithCode(
      probeFile(await fixture('image-jpeg-exif-rotated'), { ...LIMITS, maxPixels: 640 * 480 - 1 }),
      'media_limit_exceeded',
    );
  });

  it('refuses a video frame larger than the pixel limit', async () => {
    await rejectsWithCode(
      probeFile(await fixture('video-mp4'), { ...LIMITS, maxPixels: 320 * 240 - 1 }),
      'media_limit_exceeded',
      /^the video is 320x240/,
    );
  });

  it('refuses video and audio longer than the duration limit', async () => {
    await rejectsWithCode(
      probeFile(await fixture('video-mp4'), { ...LIMITS, maxDurationSeconds: 1 }),
      'media_limit_exceeded',
      /^the video is 2 s long; the limit is 1 s \(MEDIAD_MAX_DURATION_SECONDS\)$/,
    );
    const long = await audioLong(600);
    await rejectsWithCode(
      probeFile(long, { ...LIMITS, maxDurationSeconds: 300 }),
      'media_limit_exceeded',
      /10 min long; the limit is 5 min/,
    );
    assert.ok(Math.abs(((await probeFile(long, LIMITS)).duration ?? 0) - 600) < 0.1);
  });
});

describe('probeFile refusals', () => {
  let dir = '';
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'mediad-probe-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  const unsupported = async (path: string) =>
    rejectsWithCode(probeFile(path, LIMITS), 'media_unsupported', new RegExp(`^${UNSUPPORTED_MESSAGE}$`));

  it('refuses random bytes as media_unsupported', async () => unsupported(await fixture('random-bytes')));

  it('refuses empty and text files', async () => {
    await writeFile(join(dir, 'empty'), '');
    await writeFile(join(dir, 'text.txt'), 'hello, this is not a video\n'.repeat(100));
    await unsupported(join(dir, 'empty'));
    await unsupported(join(dir, 'text.txt'));
  });

  it('refuses SVG (scriptable, can reference other files)', async () => {
    await writeFile(
      join(dir, 'a.svg'),
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>',
    );
    await unsupported(join(dir, 'a.svg'));
  });

  it('refuses playlists and concat lists that would make ffmpeg read other files', async () => {
    const target = await fixture('video-mp4');
    await writeFile(
      join(dir, 'list.m3u8'),
      `#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nfile://${target}\n#EXT-X-ENDLIST\n`,
    );
    await writeFile(join(dir, 'list.txt'), `ffconcat version 1.0\nfile '${target}'\n`);
    await unsupported(join(dir, 'list.m3u8'));
    await unsupported(join(dir, 'list.txt'));
  });

  it('treats a missing file as an internal error, not as unsupported media', async () => {
    const err = await probeFile(join(dir, 'nope'), LIMITS).catch((e: unknown) => e);
    assert.ok(!isAppError(err));
    assert.equal((err as NodeJS.ErrnoException).code, 'ENOENT');
  });

  it('does not blame the file when ffprobe cannot be started', async () => {
    const saved = mediaBinaries();
    setMediaBinaries({ ffprobe: join(dir, 'no-ffprobe') });
    try {
      const err = await probeFile(await fixture('audio-wav'), LIMITS).catch((e: unknown) => e);
      assert.ok(err instanceof ProcessError && err.reason === 'spawn', String(err));
    } finally {
      setMediaBinaries(saved);
    }
  });

  it('stops when the signal is aborted', async () => {
    const err = await probeFile(await fixture('audio-wav'), LIMITS, { signal: AbortSignal.abort() }).catch(
      (e: unknown) => e,
    );
    assert.ok(!isAppError(err));
    assert.equal((err as Error).name, 'AbortError');
  });
});
