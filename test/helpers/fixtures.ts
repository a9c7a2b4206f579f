// Media fixtures generated at test time (FFmpeg lavfi sources + sharp) and cached under
// <repo>/.test-cache/fixtures. Each file name carries a hash of its recipe, so changing a
// recipe regenerates it; files are written under a temp name and renamed, so concurrent
// test processes never see a half-written fixture.
import { createHash, randomBytes } from 'node:crypto';
import { ROOT } from './paths.js';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import sharp, { type Sharp } from 'sharp';
import { mediaBinaries, runProcess } from '../../src/media/process-runner.js';

export const FIXTURE_DIR = resolve(ROOT, '.test-cache/fixtures');

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

const testsrc = (size: string, seconds: number, rate = 25) => [
  '-f',
  'lavfi',
  '-i',
  `testsrc2=size=${size}:rate=${rate}:duration=${seconds}`,
];
const sine = (seconds: number, rate = 48000) => [
  '-f',
  'lavfi',
  '-i',
  `sine=frequency=440:sample_rate=${rate}:duration=${seconds}`,
];
const H264 = ['-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p'];

/** One testsrc2 frame as PNG bytes, to be re-encoded by sharp. */
function frame(width: number, height: number): Promise<Buffer> {
  return ffmpeg(
    [...testsrc(`${width}x${height}`, 1), '-frames:v', '1', '-c:v', 'png', '-f', 'image2pipe', 'pipe:1'],
    256 << 20,
  );
}

/** Recipe encoding one testsrc2 frame with sharp. */
function still(ext: string, width: number, height: number, encode: (s: Sharp) => Sharp, key: string): Recipe {
  return {
    ext,
    key: `${width}x${height} ${key}`,
    make: async (out) => void (await encode(sharp(await frame(width, height))).toFile(out)),
  };
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
      const pixels = truncated
        ? deflateSync(Buffer.alloc(row * 4)).subarray(0, 8)
        : deflateSync(Buffer.alloc(row * size), { level: 9 });
      const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      await writeFile(
        out,
        Buffer.concat([sig, pngChunk('IHDR', ihdr), pngChunk('IDAT', pixels), pngChunk('IEND', Buffer.alloc(0))]),
      );
    },
  };
}

/** Deterministic noise (xorshift32), so the cached file is the same everywhere. */
function noise(bytes: number): Buffer {
  const buf = Buffer.alloc(bytes);
  let x = 0x9e3779b9;
  for (let i = 0; i < bytes; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    buf[i] = x & 0xff;
  }
  return buf;
}

/** Index of `needle` in `buf`, asserting it occurs exactly once before `end`. */
function uniqueIndex(buf: Buffer, needle: Buffer, what: string, end = buf.length): number {
  const at = buf.indexOf(needle);
  if (at < 0 || at >= end || (buf.indexOf(needle, at + 1) >= 0 && buf.indexOf(needle, at + 1) < end)) {
    throw new Error(`fixture: expected one ${what} in the generated file`);
  }
  return at;
}

/** HH:MM:SS.nnnnnnnnn, the form of Matroska's DURATION tags. */
function tagDuration(seconds: number): string {
  const pad = (n: number) => String(Math.floor(n)).padStart(2, '0');
  return `${pad(seconds / 3600)}:${pad((seconds / 60) % 60)}:${pad(seconds % 60)}.${String(Math.round((seconds % 1) * 1e9)).padStart(9, '0')}`;
}

/** Tiny frames at 1 fps with a keyframe every 10 s, 8 kHz Opus: 300 s fit in ~330 KB. */
const tinyAv = (seconds: number) => [
  '-f',
  'lavfi',
  '-i',
  `testsrc2=size=32x32:rate=1:duration=${seconds}`,
  ...sine(seconds, 8000),
  ...H264,
  '-g',
  '10',
  '-c:a',
  'libopus',
  '-b:a',
  '6k',
];

/**
 * A Matroska file whose header says `declared` seconds while it holds `real`: muxed normally
 * (cues included), then the Segment's Duration and the tracks' DURATION tags are overwritten,
 * so every duration ffprobe reads from the header is the false one.
 */
function lyingMkv(real: number, declared: number): Recipe {
  return {
    ext: 'mkv',
    key: `lying mkv ${tinyAv(real).join(' ')} declared ${declared}`,
    make: async (out) => {
      await ffmpeg([...tinyAv(real), out]);
      const buf = await readFile(out);
      const clusters = buf.indexOf(Buffer.from([0x1f, 0x43, 0xb6, 0x75]));
      // Duration (0x4489), an 8-byte float in TimecodeScale units (ffmpeg writes 1 ms).
      const at = uniqueIndex(buf, Buffer.from([0x44, 0x89, 0x88]), 'Segment Duration', clusters);
      buf.writeDoubleBE(declared * 1000, at + 3);
      const fake = Buffer.from(tagDuration(declared), 'latin1');
      let tags = 0;
      for (let i = buf.indexOf('DURATION'); i >= 0; i = buf.indexOf('DURATION', i + 1)) {
        const m = /\d{2}:\d{2}:\d{2}\.\d{9}/.exec(buf.subarray(i, i + 40).toString('latin1'));
        if (m) {
          fake.copy(buf, i + m.index);
          tags++;
        }
      }
      if (tags !== 2) throw new Error(`fixture: expected 2 DURATION tags, found ${tags}`);
      await writeFile(out, buf);
    },
  };
}

/**
 * A rawvideo Matroska track declaring 60000x60000 (1 frame of 256x256 grey, size fields
 * patched): ffmpeg refuses the size, so ffprobe reports the stream as 0x0.
 */
const undecodableSizeMkv: Recipe = {
  ext: 'mkv',
  key: 'rawvideo gray 256x256 1 frame, PixelWidth/PixelHeight 60000',
  make: async (out) => {
    await ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'color=c=gray:size=256x256:rate=1:duration=1',
      '-c:v',
      'rawvideo',
      '-pix_fmt',
      'gray',
      out,
    ]);
    const buf = await readFile(out);
    // PixelWidth (0xB0) and PixelHeight (0xBA), 2-byte unsigned 256 each.
    for (const id of [0xb0, 0xba])
      buf.writeUInt16BE(60_000, uniqueIndex(buf, Buffer.from([id, 0x82, 0x01, 0x00]), 'pixel size') + 2);
    await writeFile(out, buf);
  },
};

/**
 * A GIF of `frames` 1x1 frames, 23 bytes each (graphic control extension, image descriptor,
 * 2 bytes of LZW: clear, pixel, end). Written by hand: an encoder would take minutes for 200,000.
 */
function manyFrameGif(frames: number): Recipe {
  return {
    ext: 'gif',
    key: `1x1 gif ${frames} frames`,
    make: async (out) => {
      const head = Buffer.from([
        ...Buffer.from('GIF89a', 'latin1'),
        1,
        0,
        1,
        0,
        0x80,
        0,
        0,
        0,
        0,
        0,
        0xff,
        0xff,
        0xff, // 1x1, 2-colour table
        0x21,
        0xff,
        0x0b,
        ...Buffer.from('NETSCAPE2.0', 'latin1'),
        3,
        1,
        0,
        0,
        0, // loop forever
      ]);
      const frame = Buffer.from([
        0x21, 0xf9, 0x04, 0, 1, 0, 0, 0, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0x02, 0x02, 0x44, 0x01, 0x00,
      ]);
      const buf = Buffer.alloc(head.length + frames * frame.length + 1, 0x3b); // trailer last
      head.copy(buf);
      for (let i = 0; i < frames; i++) frame.copy(buf, head.length + i * frame.length);
      await writeFile(out, buf);
    },
  };
}

export const SOLID_PNG_COLOR = '#336699';

const RECIPES = {
  'video-mp4': ff(
    'mp4',
    ...testsrc('320x240', 2),
    ...sine(2),
    ...H264,
    '-c:a',
    'aac',
    '-b:a',
    '96k',
    '-shortest',
    '-movflags',
    '+faststart',
  ),
  'video-noaudio-mp4': ff('mp4', ...testsrc('320x240', 2), ...H264, '-movflags', '+faststart'),
  'video-webm': ff(
    'webm',
    ...testsrc('320x240', 2),
    ...sine(2),
    '-c:v',
    'libvpx-vp9',
    '-deadline',
    'realtime',
    '-cpu-used',
    '8',
    '-b:v',
    '400k',
    '-c:a',
    'libopus',
    '-shortest',
  ),
  'video-1080p-10s': ff(
    'mp4',
    ...testsrc('1920x1080', 10),
    ...sine(10),
    ...H264,
    '-crf',
    '23',
    '-c:a',
    'aac',
    '-shortest',
    '-movflags',
    '+faststart',
  ),
  'video-mov': ff('mov', ...testsrc('320x240', 2), ...sine(2), ...H264, '-c:a', 'aac', '-shortest'),
  'video-mkv': ff('mkv', ...testsrc('320x240', 2), ...sine(2), ...H264, '-c:a', 'aac', '-shortest'),
  // Stored 320x240 with a 90 degree display rotation: shown as 240x320.
  // (the rotate tag only survives a stream copy, hence the second pass).
  'video-rotated-mp4': {
    ext: 'mp4',
    key: 'video-noaudio-mp4 copy rotate=90',
    make: async (out: string) =>
      void (await ffmpeg([
        '-i',
        await fixture('video-noaudio-mp4'),
        '-c',
        'copy',
        '-metadata:s:v:0',
        'rotate=90',
        out,
      ])),
  },
  // Solid colour, shorter than 1 s: the frame is taken from its middle.
  'video-solid-mp4': ff(
    'mp4',
    '-f',
    'lavfi',
    '-i',
    `color=c=0x${SOLID_PNG_COLOR.slice(1)}:size=160x120:rate=25:duration=0.5`,
    ...H264,
  ),
  'audio-mp3': ff('mp3', ...sine(3, 44100), '-c:a', 'libmp3lame', '-b:a', '128k'),
  'audio-wav': ff('wav', ...sine(3, 44100), '-c:a', 'pcm_s16le'),
  'audio-m4a': ff('m4a', ...sine(2), '-c:a', 'aac'),
  'audio-ogg': ff('ogg', ...sine(2), '-c:a', 'libopus'),
  'audio-flac': ff('flac', ...sine(2), '-c:a', 'flac'),
  // MP3 with cover art: a video stream flagged attached_pic, still an audio file.
  'audio-mp3-cover': {
    ext: 'mp3',
    key: 'sine 2 + image-png cover',
    make: async (out: string) =>
      void (await ffmpeg([
        ...sine(2, 44100),
        '-i',
        await fixture('image-png'),
        '-map',
        '0',
        '-map',
        '1',
        '-c:a',
        'libmp3lame',
        '-c:v',
        'png',
        '-disposition:v',
        'attached_pic',
        out,
      ])),
  },
  'image-png': {
    ext: 'png',
    key: `64x48 ${SOLID_PNG_COLOR}`,
    make: async (out: string) =>
      void (await sharp({ create: { width: 64, height: 48, channels: 3, background: SOLID_PNG_COLOR } })
        .png()
        .toFile(out)),
  },
  'image-jpeg': still('jpg', 640, 480, (s) => s.jpeg({ quality: 85 }), 'jpeg q85'),
  'image-jpeg-exif-rotated': still(
    'jpg',
    640,
    480,
    (s) => s.jpeg({ quality: 85 }).withMetadata({ orientation: 6 }),
    'jpeg q85 orientation 6',
  ),
  'image-jpeg-4000x3000': still('jpg', 4000, 3000, (s) => s.jpeg({ quality: 85 }), 'jpeg q85'),
  'image-webp': still('webp', 200, 150, (s) => s.webp({ quality: 80 }), 'webp q80'),
  'image-avif': still('avif', 200, 150, (s) => s.avif({ quality: 50, effort: 0 }), 'avif q50 e0'),
  'image-tiff': still('tiff', 200, 150, (s) => s.tiff(), 'tiff'),
  'image-gif-animated': ff('gif', ...testsrc('160x120', 1, 10)),
  'image-huge-header': hugePng(30_000, false),
  'image-huge-header-truncated': hugePng(30_000, true),
  'random-bytes': { ext: 'bin', key: 'xorshift 65536', make: (out: string) => writeFile(out, noise(65_536)) },
  // Holds 300 s, its header says 10 s (hardening issue, point 3).
  'video-mkv-lying-duration': lyingMkv(300, 10),
  // The same layout, honestly 10 s long: its probe is what a header-trusting probe said of the liar.
  'video-mkv-tiny-10s': ff('mkv', ...tinyAv(10)),
  // The liar's 300 s muxed live (to a pipe): no Duration and no cues at all.
  'video-mkv-no-duration': {
    ext: 'mkv',
    key: `live ${tinyAv(300).join(' ')}`,
    make: async (out: string) => writeFile(out, await ffmpeg([...tinyAv(300), '-f', 'matroska', 'pipe:1'], 16 << 20)),
  },
  'video-mkv-undecodable-size': undecodableSizeMkv,
  'image-gif-200k-frames': manyFrameGif(200_000),
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
  'video-mkv-lying-duration': { kind: 'video', width: 32, height: 32, duration: 300 },
  'video-mkv-tiny-10s': { kind: 'video', width: 32, height: 32, duration: 10 },
  'video-mkv-no-duration': { kind: 'video', width: 32, height: 32, duration: 300 },
  'video-mkv-undecodable-size': { kind: 'none' },
  'image-gif-200k-frames': { kind: 'image', width: 1, height: 1 },
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
      const tmp = join(
        FIXTURE_DIR,
        `${name}-${hash}.tmp-${process.pid}-${randomBytes(4).toString('hex')}.${recipe.ext}`,
      );
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
