// Mean colour of an image or of one video frame, used as a placeholder background.
// Transparent pixels are flattened onto white, i.e. the colour as shown on a white page.
import { loadSharp } from './sharp-lib.js';
import { AppError } from '../errors.js';
import { frameGrabArgs } from './ffprobe-args.js';
import {} from './ffmpeg-preamble.js';
import { pixelLimitError, unsupported } from './formats.js';
import type { ProbeResult } from './probe.js';
import { mediaBinaries, ProcessError, runProcess } from './process-runner.js';

export interface AverageColorOptions {
  /** Pixel limit for decoding; defaults to sharp's own default (16383 x 16383). */
  maxPixels?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

const SHARP_DEFAULT_PIXELS = 0x3fff * 0x3fff;
const SAMPLE_SIZE = 64;
const DEFAULT_TIMEOUT_MS = 30_000;

export async function averageColor(
  path: string,
  probe: ProbeResult,
  opts: AverageColorOptions = {},
): Promise<string | null> {
  const maxPixels = opts.maxPixels ?? SHARP_DEFAULT_PIXELS;
  opts.signal?.throwIfAborted();
  if (probe.kind === 'image') return meanColor(path, maxPixels, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  if (probe.kind !== 'video' || !probe.hasVideo) return null;

  // ffmpeg has no pixel limit of its own: enforce it from the probed header.
  if (probe.width && probe.height && probe.width * probe.height > maxPixels) {
    throw pixelLimitError('the video', probe.width, probe.height, 1, maxPixels);
  }
  // At 1 s skips black lead-in frames; short clips use their middle.
  const at = probe.duration === undefined ? 0 : Math.min(1, probe.duration / 2);
  let png = await grabFrame(path, at, opts);
  // Header durations can lie; a seek past the real end yields no frame, so try the start.
  if (png.length === 0 && at > 0) png = await grabFrame(path, 0, opts);
  if (png.length === 0) return null;
  return meanColor(png, SAMPLE_SIZE * SAMPLE_SIZE * 16, 10_000);
}

async function grabFrame(path: string, at: number, opts: AverageColorOptions): Promise<Buffer> {
  try {
    const { stdout } = await runProcess(mediaBinaries().ffmpeg, frameGrabArgs(path, at, '-', SAMPLE_SIZE), {
      timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      signal: opts.signal,
      maxOutputBytes: 1024 * 1024,
    });
    return stdout;
  } catch (err) {
    if (err instanceof ProcessError && (err.reason === 'aborted' || err.reason === 'spawn')) throw err;
    throw unsupported(err);
  }
}

async function meanColor(input: string | Buffer, maxPixels: number, timeoutMs: number): Promise<string> {
  let data: Buffer;
  let channels: number;
  try {
    // stats() would ignore the resize (it reads the input image), so the means are taken over
    // the small raw output instead. fastShrinkOnLoad lets JPEG/WebP decode at reduced size.
    const sharp = await loadSharp();
    const out = await sharp(input, { limitInputPixels: maxPixels, sequentialRead: true })
      .timeout({ seconds: Math.max(1, Math.ceil(timeoutMs / 1000)) })
      .resize({
        width: SAMPLE_SIZE,
        height: SAMPLE_SIZE,
        fit: 'inside',
        withoutEnlargement: true,
        fastShrinkOnLoad: true,
      })
      .flatten({ background: '#ffffff' })
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    data = out.data;
    channels = out.info.channels;
  } catch (err) {
    if (err instanceof Error && /exceeds pixel limit/i.test(err.message)) {
      throw new AppError('media_limit_exceeded', 'the image is larger than the pixel limit', { cause: err });
    }
    throw unsupported(err);
  }
  const sums = [0, 0, 0];
  const pixels = data.length / channels;
  for (let i = 0; i < data.length; i += channels) {
    for (let c = 0; c < 3; c++) sums[c]! += data[i + Math.min(c, channels - 1)]!;
  }
  return (
    '#' +
    sums
      .map((s) =>
        Math.round(s / pixels)
          .toString(16)
          .padStart(2, '0'),
      )
      .join('')
  );
}
