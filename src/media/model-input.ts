// Pixels for image models and vision providers: decoded and resized here because sharp and
// ffmpeg live in src/media. Model inputs are packed RGB bytes (height x width x 3).
import { loadSharp } from './sharp-lib.js';
import { failureLine } from './ffmpeg-run.js';
import { formatSeconds } from './ffprobe-args.js';
import { ffmpegPreamble, oneStreamOf } from './ffmpeg-preamble.js';
import { mediaBinaries, ProcessError, runProcess } from './process-runner.js';
import { MediaTransformError } from './transform-error.js';
import { sharpFailure } from './sharp-failure.js';

export interface RgbImage {
  /** size x size x 3 bytes, row-major. */
  data: Buffer;
  size: number;
}

/**
 * An image stretched to size x size RGB (the model sees the whole frame, as nsfwjs does when it
 * resizes without keeping the aspect ratio). EXIF orientation applied, alpha flattened on white.
 */
export async function imageToRgb(path: string, size: number, opts: { maxPixels?: number } = {}): Promise<RgbImage> {
  try {
    const sharp = await loadSharp();
    const { data, info } = await sharp(path, { limitInputPixels: opts.maxPixels ?? 100_000_000, failOn: 'error' })
      .rotate()
      .flatten({ background: '#ffffff' })
      .resize(size, size, { fit: 'fill', kernel: 'lanczos3' })
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3 || data.length !== size * size * 3)
      throw new Error(`unexpected ${info.channels}-channel output`);
    return { data, size };
  } catch (err) {
    throw sharpFailure(err, 'decoded');
  }
}

export interface VideoFrameSample {
  /** Seconds of the first frame to take. */
  start: number;
  /** Seconds between frames. */
  interval: number;
  /** Frames to take at most (fewer when the video ends first). */
  count: number;
  size: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** argv: `count` frames every `interval` s from `start`, scaled to size x size, as raw RGB on stdout. */
export function videoRgbFramesArgs(
  inputPath: string,
  s: Pick<VideoFrameSample, 'start' | 'interval' | 'count' | 'size'>,
): string[] {
  return [
    ...ffmpegPreamble({ overwrite: false }),
    '-ss',
    formatSeconds(s.start),
    ...oneStreamOf(inputPath, 'video'),
    // fps picks the frame nearest each tick; timestamps restart at 0 after the input seek.
    '-vf',
    `fps=1/${s.interval},scale=${s.size}:${s.size}:flags=area,format=rgb24`,
    '-frames:v',
    String(s.count),
    '-f',
    'rawvideo',
    'pipe:1',
  ];
}

/** Frames as size x size RGB buffers; frame i is at start + i * interval. */
export async function videoRgbFrames(inputPath: string, s: VideoFrameSample): Promise<RgbImage[]> {
  const frameBytes = s.size * s.size * 3;
  let stdout: Buffer;
  try {
    ({ stdout } = await runProcess(mediaBinaries().ffmpeg, videoRgbFramesArgs(inputPath, s), {
      timeoutMs: s.timeoutMs,
      signal: s.signal,
      maxOutputBytes: frameBytes * s.count + 1,
    }));
  } catch (err) {
    if (err instanceof ProcessError && err.reason === 'exit') {
      throw new MediaTransformError('transform_failed', `frames could not be read: ${failureLine(err.stderrTail)}`, {
        cause: err,
      });
    }
    throw err;
  }
  const frames: RgbImage[] = [];
  for (let off = 0; off + frameBytes <= stdout.length; off += frameBytes) {
    frames.push({ data: stdout.subarray(off, off + frameBytes), size: s.size });
  }
  return frames;
}

/** A JPEG data URL no larger than maxSide on its longer side, for vision models. */
export async function imageDataUrl(
  path: string,
  opts: { maxSide?: number; quality?: number; maxPixels?: number } = {},
): Promise<string> {
  const side = opts.maxSide ?? 1024;
  try {
    const sharp = await loadSharp();
    const jpeg = await sharp(path, { limitInputPixels: opts.maxPixels ?? 100_000_000, failOn: 'error' })
      .rotate()
      .flatten({ background: '#ffffff' })
      .resize(side, side, { fit: 'inside', withoutEnlargement: true })
      .jpeg({ quality: opts.quality ?? 80 })
      .toBuffer();
    return `data:image/jpeg;base64,${jpeg.toString('base64')}`;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new MediaTransformError('transform_failed', `the image could not be decoded: ${failureLine(message)}`, {
      cause: err,
    });
  }
}
