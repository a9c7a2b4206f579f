// Image transform with sharp, plus the ffmpeg frame grab used when an image task's input is a
// video. Kept close to a bare sharp pipeline: the benchmark allows 1.15x raw sharp.
import { rm, stat } from 'node:fs/promises';
import type { Sharp } from 'sharp';
import { loadSharp } from './sharp-lib.js';
import { checkFrameTime, type DurationLimit } from './duration-cap.js';
import { runFfmpeg } from './ffmpeg-run.js';
import { formatSeconds } from './ffprobe-args.js';
import { ffmpegPreamble, fileUrl, oneStreamOf } from './ffmpeg-preamble.js';
import { MediaTransformError } from './transform-error.js';
import { sharpFailure } from './sharp-failure.js';
import type { Position } from './video-args.js';

export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'avif' | 'gif';
export type ImageFit = 'contain' | 'cover' | 'fill' | 'inside' | 'outside';

export interface ImageOptions {
  width?: number;
  height?: number;
  fit: ImageFit;
  position: Position;
  /** #rrggbb or #rrggbbaa: `contain` padding, and what transparency becomes in JPEG. */
  background: string;
  format: ImageFormat;
  /** 1–100; PNG and GIF are lossless here and ignore it. */
  quality: number;
}

export interface ImageTransformContext {
  /** Decoded pixels allowed (all frames of an animation together). */
  maxPixels: number;
  /** Whether the input is animated (ProbeResult.frames > 1); read from the header when omitted. */
  animated?: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface ImageTransformResult {
  width: number;
  /** Of one frame for animations. */
  height: number;
  format: ImageFormat;
  mime: string;
  size: number;
  frames?: number;
}

const OUTPUT: Readonly<Record<ImageFormat, { extension: string; mime: string }>> = {
  jpeg: { extension: 'jpg', mime: 'image/jpeg' },
  png: { extension: 'png', mime: 'image/png' },
  webp: { extension: 'webp', mime: 'image/webp' },
  avif: { extension: 'avif', mime: 'image/avif' },
  gif: { extension: 'gif', mime: 'image/gif' },
};

export function imageOutputFormat(format: ImageFormat): { extension: string; mime: string } {
  return OUTPUT[format];
}

export const SHARP_POSITION: Readonly<Record<Position, string>> = {
  center: 'centre',
  top: 'top',
  bottom: 'bottom',
  left: 'left',
  right: 'right',
  top_left: 'left top',
  top_right: 'right top',
  bottom_left: 'left bottom',
  bottom_right: 'right bottom',
};

/** '#rrggbb[aa]' → sharp colour; malformed values are a bug upstream. */
export function parseBackground(hex: string): { r: number; g: number; b: number; alpha: number } {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})?$/i.exec(hex);
  if (!m) throw new RangeError(`background must be #rrggbb or #rrggbbaa, got ${JSON.stringify(hex)}`);
  const byte = (s: string | undefined) => Number.parseInt(s ?? 'ff', 16);
  return { r: byte(m[1]), g: byte(m[2]), b: byte(m[3]), alpha: byte(m[4]) / 255 };
}

function encode(img: Sharp, opts: ImageOptions, animated: boolean): Sharp {
  const quality = Math.min(100, Math.max(1, Math.round(opts.quality)));
  switch (opts.format) {
    case 'jpeg':
      return img.jpeg({ quality });
    // Full colour, zlib level 6 (the usual speed/size balance); palette would be lossy.
    case 'png':
      return img.png({ compressionLevel: 6, palette: false });
    case 'webp':
      return img.webp({ quality, ...(animated ? { loop: 0 } : {}) });
    case 'avif':
      return img.avif({ quality });
    case 'gif':
      return img.gif();
  }
}

async function isAnimated(path: string, maxPixels: number): Promise<boolean> {
  const sharp = await loadSharp();
  const meta = await sharp(path, { limitInputPixels: maxPixels }).metadata();
  return (meta.format === 'gif' || meta.format === 'webp') && (meta.pages ?? 1) > 1;
}

export async function transformImage(
  inputPath: string,
  outputPath: string,
  opts: ImageOptions,
  ctx: ImageTransformContext,
): Promise<ImageTransformResult> {
  ctx.signal?.throwIfAborted();
  const bg = parseBackground(opts.background);
  try {
    // Only GIF/WebP keep animation; a multi-page TIFF or HEIF is not an animation.
    const animated =
      (opts.format === 'gif' || opts.format === 'webp') &&
      (ctx.animated ?? (await isAnimated(inputPath, ctx.maxPixels)));
    // failOn 'error': phone JPEGs often end early or carry odd markers (warnings) and still
    // show fine in browsers; real decode errors still fail.
    const sharp = await loadSharp();
    let img = sharp(inputPath, {
      limitInputPixels: ctx.maxPixels,
      sequentialRead: true,
      failOn: 'error',
      animated,
    }).rotate(); // EXIF orientation; metadata is not copied to the output (sharp's default)
    if (ctx.timeoutMs) img = img.timeout({ seconds: Math.max(1, Math.ceil(ctx.timeoutMs / 1000)) });
    if (opts.width || opts.height) {
      img = img.resize({
        width: opts.width,
        height: opts.height,
        fit: opts.fit,
        position: SHARP_POSITION[opts.position],
        background: bg,
      });
    }
    if (opts.format === 'jpeg') img = img.flatten({ background: { r: bg.r, g: bg.g, b: bg.b } });
    const info = await encode(img, opts, animated).toFile(outputPath);
    const frames = animated ? (info.pages ?? 1) : 1;
    return {
      width: info.width,
      height: frames > 1 ? (info.pageHeight ?? Math.round(info.height / frames)) : info.height,
      format: opts.format,
      mime: OUTPUT[opts.format].mime,
      size: info.size,
      ...(frames > 1 ? { frames } : {}),
    };
  } catch (err) {
    throw sharpFailure(err, 'processed');
  }
}

/** Poster frame time when the task gives none: 1 s skips black lead-in, short clips use 0. */
export function defaultFrameTime(durationSeconds: number | undefined): number {
  return durationSeconds !== undefined && durationSeconds > 2 ? 1 : 0;
}

/** One full-resolution PNG frame; `-ss` before `-i` seeks by index instead of decoding up to it. */
export function videoFrameArgs(inputPath: string, atSeconds: number, outPngPath: string): string[] {
  return [
    ...ffmpegPreamble(),
    '-ss',
    formatSeconds(atSeconds),
    ...oneStreamOf(inputPath, 'video'),
    '-frames:v',
    '1',
    // An intermediate file read once by sharp: fast zlib beats small.
    '-c:v',
    'png',
    '-compression_level',
    '1',
    '-f',
    'image2',
    '-update',
    '1',
    fileUrl(outPngPath),
  ];
}

/** `limit`: the frame time must be within the duration limit (decoding runs up to it). */
export async function grabVideoFrame(
  inputPath: string,
  atSeconds: number,
  outPngPath: string,
  opts: { timeoutMs: number; signal?: AbortSignal },
  limit: DurationLimit,
): Promise<void> {
  checkFrameTime(atSeconds, limit);
  await rm(outPngPath, { force: true });
  await runFfmpeg(videoFrameArgs(inputPath, atSeconds, outPngPath), opts);
  // A seek past the last frame succeeds with nothing written.
  const st = await stat(outPngPath).catch(() => null);
  if (!st || st.size === 0) {
    throw new MediaTransformError('invalid_for_input', `the video has no frame at ${formatSeconds(atSeconds)} s`);
  }
}
