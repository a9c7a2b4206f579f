// Media fixtures generated at test time (FFmpeg lavfi sources + sharp) and cached under
// <repo>/.test-cache/fixtures. Each file name carries a hash of its recipe, so changing a
// recipe regenerates it; files are written under a temp name and renamed, so concurrent
// test processes never see a half-written fixture.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, deflateSync } from 'node:zlib';
import sharp, { type Sharp } from 'sharp';
import { mediaBinaries, runProcess } from '../../src/media/process-runner.js';

export const FIXTURE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../.test-cache/fixtures');

interface Recipe {
  ext: string;
  /** Everything that determines the output; hashed into the cached file name. */
  key: string;
  make: (out: string) => Promise<void>;
}

async function ffmpeg(args: string[], maxOutputBytes?: number): Promise<Buffer> {
  const base = ['-hide_banner', '-nostdin', '-v', 'error', '-y'];
  const res = await runProcess(mediaBinaries().ffmpeg, [...base, ...args], { timeoutMs: 300_000, maxOutputBytes });
  return res.stdout;
}

/** Recipe for an ffmpeg command; the output path is appended. */
function ff(ext: string, ...args: string[]): Recipe {
  return { ext, key: args.join(' '), make: async (out) => void (await ffmpeg([...args, out])) };
}

const testsrc = (size: string, seconds: number, rate = 25) => ['-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=${rate}:duration=${seconds}`];
const sine = (seconds: number, rate = 48000) => ['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=${rate}:duration=${seconds}`];
const H264 = ['-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p'];

/** One testsrc2 frame as PNG bytes, to be re-encoded by sharp. */
function frame(width: number, height: number): Promise<Buffer> {
  return ffmpeg([...testsrc(`${width}x${height}`, 1), '-frames:v', '1', '-c:v', 'png', '-f', 'image2pipe', 'pipe:1'], 256 << 20);
}

/** Recipe encoding one testsrc2 frame with sharp. */
function still(ext: string, width: number, height: number, encode: (s: Sharp) => Sharp, key: string): Recipe {
  return { ext, key: `${width}x${height} ${key}`, make: async (out) => void (await encode(sharp(await frame(width, height))).toFile(out)) };
}

function pngChunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/**
 * A 1-bit greyscale PNG declaring `size` x `size`. Complete, its pixel data deflates to ~100 KB
 * for 30000². Truncated, it holds a few rows only: the header is valid but decoding must fail,
 * so a refusal on it proves the limit check ran before any decode.
 */
function hugePng(size: number, truncated: boolean): Recipe {
  return {
    ext: 'png',
    key: `huge ${size} ${truncated}`,
    make: async (out) => {
      const ihdr = Buffer.alloc(13);
      ihdr.writeUInt32BE(size, 0);
      ihdr.writeUInt32BE(size, 4);
      ihdr.set([1, 0, 0, 0, 0], 8); // bit depth 1, greyscale, deflate, no filter, no interlace
      const row = 1 + Math.ceil(size / 8);
      const pixels = truncated ? deflateSync(Buffer.alloc(row * 4)).subarray(0, 8) : deflateSync(Buffer.alloc(row * size), { level: 9 });
      const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      await writeFile(out, Buffer.concat([sig, pngChunk('IHDR', ihdr), pngChunk('IDAT', pixels), pngChunk('IEND', Buffer.alloc(0))]));
    },
  };
}

/** Deterministic noise (xorshift32), so the cached file is the same everywhere. */
function noise(bytes: number): Buffer {
  const buf = Buffer.alloc(bytes);
  let x = 0x9e3779b9;
  for (let i = 0; i < bytes; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    buf[i] = x & 0xff;
  }
  return buf;
}

export const SOLID_PNG_COLOR = '#336699';

const RECIPES = {
  'video-mp4': ff('mp4', ...testsrc('320x240', 2), ...sine(2), ...H264, '-c:a', 'aac', '-b:a', '96k', '-shortest', '-movflags', '+faststart'),
  'video-noaudio-mp4': ff('mp4', ...testsrc('320x240', 2), ...H264, '-movflags', '+faststart'),
  'video-webm': ff('webm', ...testsrc('320x240', 2), ...sine(2), '-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '400k', '-c:a', 'libopus', '-shortest'),
  'video-1080p-10s': ff('mp4', ...testsrc('1920x1080', 10), ...sine(10), ...H264, '-crf', '23', '-c:a', 'aac', '-shortest', '-movflags', '+faststart'),
  'video-mov': ff('mov', ...testsrc('320x240', 2), ...sine(2), ...H264, '-c:a', 'aac', '-shortest'),
  'video-mkv': ff('mkv', ...testsrc('320x240', 2), ...sine(2), ...H264, '-c:a', 'aac', '-shortest'),
  // Stored 320x240 with a 90 degree display rotation: shown as 240x320.
  // (the rotate tag only survives a stream copy, hence the second pass).
  'video-rotated-mp4': {
    ext: 'mp4',
    key: 'video-noaudio-mp4 copy rotate=90',
    make: async (out: string) => void (await ffmpeg(['-i', await fixture('video-noaudio-mp4'), '-c', 'copy', '-metadata:s:v:0', 'rotate=90', out])),
  },
  // Solid colour, shorter than 1 s: the frame is taken from its middle.
  'video-solid-mp4': ff('mp4', '-f', 'lavfi', '-i', `color=c=0x${SOLID_PNG_COLOR.slice(1)}:size=160x120:rate=25:duration=0.5`, ...H264),
  'audio-mp3': ff('mp3', ...sine(3, 44100), '-c:a', 'libmp3lame', '-b:a', '128k'),
  'audio-wav': ff('wav', ...sine(3, 44100), '-c:a', 'pcm_s16le'),
  'audio-m4a': ff('m4a', ...sine(2), '-c:a', 'aac'),
  'audio-ogg': ff('ogg', ...sine(2), '-c:a', 'libopus'),
  'audio-flac': ff('flac', ...sine(2), '-c:a', 'flac'),
  // MP3 with cover art: a video stream flagged attached_pic, still an audio file.
  'audio-mp3-cover': {
    ext: 'mp3',
    key: 'sine 2 + image-png cover',
    make: async (out: string) => void (await ffmpeg([
      ...sine(2, 44100), '-i', await fixture('image-png'), '-map', '0', '-map', '1',
      '-c:a', 'libmp3lame', '-c:v', 'png', '-disposition:v', 'attached_pic', out,
    ])),
  },
  'image-png': {
    ext: 'png',
    key: `64x48 ${SOLID_PNG_COLOR}`,
    make: async (out: string) => void (await sharp({ create: { width: 64, height: 48, channels: 3, background: SOLID_PNG_COLOR } }).png().toFile(out)),
  },
  'image-jpeg': still('jpg', 640, 480, (s) => s.jpeg({ quality: 85 }), 'jpeg q85'),
  'image-jpeg-exif-rotated': still('jpg', 640, 480, (s) => s.jpeg({ quality: 85 }).withMetadata({ orientation: 6 }), 'jpeg q85 orientation 6'),
  'image-jpeg-4000x3000': still('jpg', 4000, 3000, (s) => s.jpeg({ quality: 85 }), 'jpeg q85'),
  'image-webp': still('webp', 200, 150, (s) => s.webp({ quality: 80 }), 'webp q80'),
  'image-avif': still('avif', 200, 150, (s) => s.avif({ quality: 50, effort: 0 }), 'avif q50 e0'),
  'image-tiff': still('tiff', 200, 150, (s) => s.tiff(), 'tiff'),
  'image-gif-animated': ff('gif', ...testsrc('160x120', 1, 10)),
  'image-huge-header': hugePng(30_000, false),
  'image-huge-header-truncated': hugePng(30_000, true),
  'random-bytes': { ext: 'bin', key: 'xorshift 65536', make: (out: string) => writeFile(out, noise(65_536)) },
} satisfies Record<string, Recipe>;

export type FixtureName = keyof typeof RECIPES;
export const FIXTURE_NAMES = Object.keys(RECIPES) as FixtureName[];

export interface FixtureInfo {
  kind: 'video' | 'image' | 'audio' | 'none';
  width?: number;
  height?: number;
  duration?: number;
}

/** What probing each fixture should find (displayed size, i.e. after EXIF rotation). */
export const fixtureInfo: Record<FixtureName, FixtureInfo> = {
  'video-mp4': { kind: 'video', width: 320, height: 240, duration: 2 },
  'video-noaudio-mp4': { kind: 'video', width: 320, height: 240, duration: 2 },
  'video-webm': { kind: 'video', width: 320, height: 240, duration: 2 },
  'video-1080p-10s': { kind: 'video', width: 1920, height: 1080, duration: 10 },
  'video-mov': { kind: 'video', width: 320, height: 240, duration: 2 },
  'video-mkv': { kind: 'video', width: 320, height: 240, duration: 2 },
  'video-rotated-mp4': { kind: 'video', width: 240, height: 320, duration: 2 },
  'video-solid-mp4': { kind: 'video', width: 160, height: 120, duration: 0.5 },
  'audio-mp3': { kind: 'audio', duration: 3 },
  'audio-m4a': { kind: 'audio', duration: 2 },
  'audio-ogg': { kind: 'audio', duration: 2 },
  'audio-flac': { kind: 'audio', duration: 2 },
  'audio-mp3-cover': { kind: 'audio', duration: 2 },
  'audio-wav': { kind: 'audio', duration: 3 },
  'image-png': { kind: 'image', width: 64, height: 48 },
  'image-jpeg': { kind: 'image', width: 640, height: 480 },
  'image-jpeg-exif-rotated': { kind: 'image', width: 480, height: 640 },
  'image-jpeg-4000x3000': { kind: 'image', width: 4000, height: 3000 },
  'image-webp': { kind: 'image', width: 200, height: 150 },
  'image-avif': { kind: 'image', width: 200, height: 150 },
  'image-tiff': { kind: 'image', width: 200, height: 150 },
  'image-gif-animated': { kind: 'image', width: 160, height: 120 },
  'image-huge-header': { kind: 'image', width: 30_000, height: 30_000 },
  'image-huge-header-truncated': { kind: 'image', width: 30_000, height: 30_000 },
  'random-bytes': { kind: 'none' },
};

const pending = new Map<string, Promise<string>>();

async function cached(name: string, recipe: Recipe): Promise<string> {
  const hash = createHash('sha256').update(recipe.key).digest('hex').slice(0, 10);
  const path = join(FIXTURE_DIR, `${name}-${hash}.${recipe.ext}`);
  let job = pending.get(path);
  if (!job) {
    job = (async () => {
      const existing = await stat(path).catch(() => null);
      if (existing && existing.size > 0) return path;
      await mkdir(FIXTURE_DIR, { recursive: true });
      // Keep the extension last: ffmpeg picks the muxer from it.
      const tmp = join(FIXTURE_DIR, `${name}-${hash}.tmp-${process.pid}-${randomBytes(4).toString('hex')}.${recipe.ext}`);
      try {
        await recipe.make(tmp);
        await rename(tmp, path);
      } finally {
        await rm(tmp, { force: true });
      }
      return path;
    })();
    pending.set(path, job);
    job.catch(() => pending.delete(path));
  }
  return job;
}

/** Absolute path of a generated fixture (generated on first use, then cached on disk). */
export function fixture(name: FixtureName): Promise<string> {
  return cached(name, RECIPES[name]);
}

/** A valid WAV of `seconds` (8 kHz mono 8-bit sine: small and quick), e.g. for duration limits. */
export function audioLong(seconds: number): Promise<string> {
  return cached(`audio-long-${seconds}s`, ff('wav', ...sine(seconds, 8000), '-c:a', 'pcm_u8'));
}

/** A valid 16-bit 48 kHz stereo sine WAV of about `bytes` bytes (e.g. 1 GB for ingest benchmarks). */
export function largeWav(bytes: number): Promise<string> {
  const seconds = Math.max(1, Math.round((bytes - 44) / (48_000 * 4)));
  return cached(`large-wav-${bytes}`, ff('wav', ...sine(seconds), '-ac', '2', '-c:a', 'pcm_s16le'));
}
