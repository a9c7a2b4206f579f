// The sharp pipeline of on-the-fly image URLs: one decode, one encode, straight to a buffer (the
// result is small and is sent to the client at once, then stored). Kept as close to a bare sharp
// call as the options allow: the benchmark holds a cache miss to 1.10x raw sharp.
import type sharpModule from 'sharp';
import type { Sharp } from 'sharp';
import { loadSharp } from './sharp-lib.js';
import {
  imageOutputFormat,
  parseBackground,
  SHARP_POSITION,
  type ImageFit,
  type ImageFormat,
} from './image-transform.js';
import { POSITIONS } from './video-args.js';
import { sharpFailure } from './sharp-failure.js';

/** The positions of the image kind, and sharp's smart crops. */
export const IMAGE_URL_POSITIONS = [...POSITIONS, 'attention', 'entropy'] as const;
export type ImageUrlPositionName = (typeof IMAGE_URL_POSITIONS)[number];

export interface ImageUrlRender {
  width?: number;
  height?: number;
  fit: ImageFit;
  position: ImageUrlPositionName;
  format: ImageFormat;
  quality: number;
  /** #rrggbb[aa]: contain padding, and what transparency becomes in JPEG. */
  background: string;
  blur?: number;
  sharpen?: number;
  rotate: 0 | 90 | 180 | 270;
  /** Upscale a source smaller than the box (else it keeps its size). */
  enlarge: boolean;
  /** The page (frame) of a multi-page source; ignored when `animated`. */
  page?: number;
  /** Keep every frame (animated GIF/WebP source to GIF/WebP). */
  animated: boolean;
}

export interface ImageUrlResult {
  data: Buffer;
  width: number;
  height: number;
  format: ImageFormat;
  mime: string;
}

let position: Readonly<Record<ImageUrlPositionName, string | number>> | null = null;
/** The crop positions, sharp's smart strategies among them (read from sharp once it is loaded). */
function positions(sharp: typeof sharpModule): Readonly<Record<ImageUrlPositionName, string | number>> {
  return (position ??= { ...SHARP_POSITION, attention: sharp.strategy.attention, entropy: sharp.strategy.entropy });
}

function encode(img: Sharp, r: ImageUrlRender): Sharp {
  const quality = Math.min(100, Math.max(1, Math.round(r.quality)));
  switch (r.format) {
    case 'jpeg':
      return img.jpeg({ quality, mozjpeg: false });
    case 'png':
      return img.png({ compressionLevel: 6, palette: false });
    case 'webp':
      return img.webp({ quality, ...(r.animated ? { loop: 0 } : {}) });
    case 'avif':
      // effort 2 of 0–9: AVIF at sharp's default effort (4) takes seconds per image.
      return img.avif({ quality, effort: 2 });
    case 'gif':
      return img.gif();
  }
}

/** Renders `input` (a local path or the bytes) with the options; the source's pixels are limited by `maxPixels`. */
export async function renderImageUrl(
  input: string | Buffer,
  r: ImageUrlRender,
  ctx: { maxPixels: number; timeoutSeconds: number },
): Promise<ImageUrlResult> {
  const bg = parseBackground(r.background);
  try {
    const sharp = await loadSharp();
    let img = sharp(input, {
      limitInputPixels: ctx.maxPixels,
      failOn: 'error',
      // A resize reads the image once, top to bottom; rotating needs random access.
      sequentialRead: r.rotate === 0,
      animated: r.animated,
      ...(r.page !== undefined && !r.animated ? { page: r.page } : {}),
    })
      .autoOrient()
      .timeout({ seconds: ctx.timeoutSeconds });
    if (r.rotate !== 0) img = img.rotate(r.rotate);
    if (r.width !== undefined || r.height !== undefined) {
      img = img.resize({
        width: r.width,
        height: r.height,
        fit: r.fit,
        position: positions(sharp)[r.position],
        background: bg,
        withoutEnlargement: !r.enlarge,
      });
    }
    if (r.blur !== undefined) img = img.blur(r.blur);
    if (r.sharpen !== undefined) img = img.sharpen({ sigma: r.sharpen });
    if (r.format === 'jpeg') img = img.flatten({ background: { r: bg.r, g: bg.g, b: bg.b } });
    const { data, info } = await encode(img, r).toBuffer({ resolveWithObject: true });
    const pages = r.animated ? (info.pages ?? 1) : 1;
    return {
      data,
      width: info.width,
      height: pages > 1 ? (info.pageHeight ?? Math.round(info.height / pages)) : info.height,
      format: r.format,
      mime: imageOutputFormat(r.format).mime,
    };
  } catch (err) {
    throw sharpFailure(err, 'processed');
  }
}

/** The page of an animated image shown at `seconds` (its frame delays from the header), and the page count. */
export async function animatedPageAt(
  input: string | Buffer,
  seconds: number,
  maxPixels: number,
): Promise<{ page: number; pages: number; duration: number }> {
  try {
    const sharp = await loadSharp();
    const meta = await sharp(input, { limitInputPixels: maxPixels }).metadata();
    const pages = meta.pages ?? 1;
    const delays = meta.delay ?? [];
    let at = 0;
    let page = -1;
    for (let i = 0; i < pages; i++) {
      const d = (delays[i] ?? 100) / 1000;
      if (page < 0 && seconds < at + d) page = i;
      at += d;
    }
    return { page, pages, duration: at };
  } catch (err) {
    throw sharpFailure(err, 'read');
  }
}
