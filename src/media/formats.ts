// Pure mapping from what sharp/ffprobe report to the format, extension and MIME type mediad
// stores. Kept free of I/O so the decisions can be unit tested.
import { AppError } from '../errors.js';

export type MediaKind = 'video' | 'image' | 'audio';

export interface FormatInfo {
  format: string;
  extension: string;
  mime: string;
}

/**
 * Image formats we accept from sharp's `metadata().format`. SVG is left out on purpose: it can
 * reference other files when rendered and is a script vector when served back.
 */
const IMAGE_FORMATS: Record<string, FormatInfo> = {
  jpeg: { format: 'jpeg', extension: 'jpg', mime: 'image/jpeg' },
  png: { format: 'png', extension: 'png', mime: 'image/png' },
  webp: { format: 'webp', extension: 'webp', mime: 'image/webp' },
  gif: { format: 'gif', extension: 'gif', mime: 'image/gif' },
  tiff: { format: 'tiff', extension: 'tiff', mime: 'image/tiff' },
  avif: { format: 'avif', extension: 'avif', mime: 'image/avif' },
  heif: { format: 'heif', extension: 'heic', mime: 'image/heic' },
};

/** Bytes of a file's start that mayBeImage needs (an ISO BMFF `ftyp` box with its brands fits). */
export const IMAGE_SIGNATURE_BYTES = 256;

const ascii = (head: Uint8Array, at: number, text: string) =>
  head.length >= at + text.length && [...text].every((c, i) => head[at + i] === c.charCodeAt(0));
/** Brands of an `ftyp` box that make it a HEIF image (AVIF or HEIC) rather than an MP4 or MOV. */
const HEIF_BRANDS = new Set([
  'avif',
  'avis',
  'heic',
  'heix',
  'hevc',
  'hevx',
  'heim',
  'heis',
  'hevm',
  'hevs',
  'mif1',
  'msf1',
]);

/**
 * Whether a file starting with `head` can be one of IMAGE_FORMATS, by the signatures libvips's
 * loaders check themselves: a file that cannot goes straight to ffprobe, without loading sharp
 * and libvips (~8 MB of code and a thread in a process that only ever takes audio and video).
 */
export function mayBeImage(head: Uint8Array): boolean {
  const b = head;
  if (b[0] === 0xff && b[1] === 0xd8) return true; // JPEG
  if (ascii(b, 0, '\x89PNG\r\n\x1a\n') || ascii(b, 0, 'GIF8')) return true;
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP')) return true;
  // TIFF and BigTIFF, either byte order.
  if (
    (ascii(b, 0, 'II') && (b[2] === 42 || b[2] === 43) && b[3] === 0) ||
    (ascii(b, 0, 'MM') && b[2] === 0 && (b[3] === 42 || b[3] === 43))
  )
    return true;
  if (!ascii(b, 4, 'ftyp')) return false;
  // ISO BMFF: the major brand at 8, then the minor version, then the compatible brands to the box's end.
  const end = Math.min(b.length, ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0);
  for (let at = 8; at + 4 <= end; at += at === 8 ? 8 : 4) {
    if (HEIF_BRANDS.has(String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!))) return true;
  }
  return false;
}

/** Formats whose extra pages are animation frames (a multi-page TIFF is not an animation). */
export const ANIMATED_IMAGE_FORMATS = new Set(['gif', 'webp']);

/**
 * `sharpFormat` as sharp names it ('heif' covers AVIF and HEIC, told apart by `compression`).
 * `heicReadable`: whether this libvips build can decode HEVC (the prebuilt sharp cannot).
 */
export function imageFormat(
  sharpFormat: string,
  compression: string | undefined,
  heicReadable: boolean,
): FormatInfo | null {
  if (sharpFormat === 'heif') {
    if (compression === 'av1') return IMAGE_FORMATS.avif ?? null;
    return heicReadable && compression === 'hevc' ? (IMAGE_FORMATS.heif ?? null) : null;
  }
  return IMAGE_FORMATS[sharpFormat] ?? null;
}

const WEBM_VIDEO = new Set(['vp8', 'vp9', 'av1']);
const WEBM_AUDIO = new Set(['opus', 'vorbis']);
const WEBM_SUBTITLE = new Set(['webvtt']);

export interface ContainerFacts {
  /** ffprobe `format.format_name`, e.g. "mov,mp4,m4a,3gp,3g2,mj2". */
  formatName: string;
  /** ffprobe `format.tags.major_brand` (ISO BMFF only). */
  majorBrand?: string;
  kind: 'video' | 'audio';
  videoCodecs: string[];
  audioCodecs: string[];
  subtitleCodecs: string[];
}

function info(format: string, extension: string, mime: string): FormatInfo {
  return { format, extension, mime };
}

/** Container → stored format, or null for a demuxer we do not map (treated as unsupported). */
export function containerFormat(facts: ContainerFacts): FormatInfo | null {
  const names = facts.formatName.split(',');
  const audio = facts.kind === 'audio';
  if (names.includes('mov')) {
    // One demuxer covers MP4, MOV, M4A and 3GP; the major brand tells them apart.
    const brand = (facts.majorBrand ?? '').trim().toLowerCase();
    if (brand === '' || brand === 'qt') return info('mov', 'mov', 'video/quicktime');
    if (brand.startsWith('3g')) return audio ? info('3gp', '3gp', 'audio/3gpp') : info('3gp', '3gp', 'video/3gpp');
    return audio ? info('m4a', 'm4a', 'audio/mp4') : info('mp4', 'mp4', 'video/mp4');
  }
  if (names.includes('matroska')) {
    // WebM is the Matroska subset with these codecs only; ffprobe does not report the DocType.
    const webm =
      facts.videoCodecs.every((c) => WEBM_VIDEO.has(c)) &&
      facts.audioCodecs.every((c) => WEBM_AUDIO.has(c)) &&
      facts.subtitleCodecs.every((c) => WEBM_SUBTITLE.has(c));
    if (webm) return audio ? info('webm', 'webm', 'audio/webm') : info('webm', 'webm', 'video/webm');
    return audio ? info('mka', 'mka', 'audio/x-matroska') : info('mkv', 'mkv', 'video/x-matroska');
  }
  const first = names[0] ?? '';
  switch (first) {
    case 'mp3':
      return info('mp3', 'mp3', 'audio/mpeg');
    case 'wav':
      return info('wav', 'wav', 'audio/wav');
    case 'flac':
      return info('flac', 'flac', 'audio/flac');
    case 'aac':
      return info('aac', 'aac', 'audio/aac');
    case 'aiff':
      return info('aiff', 'aiff', 'audio/aiff');
    case 'ogg':
      return audio ? info('ogg', 'ogg', 'audio/ogg') : info('ogg', 'ogv', 'video/ogg');
    case 'avi':
      return info('avi', 'avi', 'video/x-msvideo');
    case 'mpegts':
      return info('ts', 'ts', 'video/mp2t');
    default:
      return null;
  }
}

/** "400 MP", "12.2 MP", "0.3 MP". */
export function formatMegapixels(pixels: number): string {
  const mp = pixels / 1_000_000;
  return `${mp >= 10 ? Math.round(mp) : Number(mp.toFixed(1))} MP`;
}

/** "12.5 s", "3 min 20 s", "2 h 5 min". */
export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Number(seconds.toFixed(1))} s`;
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return m > 0 ? `${h} h ${m} min` : `${h} h`;
  return s > 0 ? `${m} min ${s} s` : `${m} min`;
}

export const UNSUPPORTED_MESSAGE = 'the file is not an image, video or audio file that mediad can read';

export function unsupported(cause?: unknown): AppError {
  return new AppError('media_unsupported', UNSUPPORTED_MESSAGE, { cause });
}

/**
 * The setting that raises each limit. Refusals name it: the caller learns what the limit is,
 * the operator what to change.
 */
export const LIMIT_SETTINGS = {
  pixels: 'MEDIAD_MAX_PIXELS',
  duration: 'MEDIAD_MAX_DURATION_SECONDS',
  frames: 'MEDIAD_MAX_FRAMES',
} as const;

/**
 * Default of MEDIAD_MAX_FRAMES. The pixel limit already bounds animations of normal-sized frames
 * (100 MP allows ~770 frames of 480x270), so this bounds the per-frame overhead of tiny frames:
 * libvips takes ~10 us per frame (1x1 GIF -> GIF: 10,000 frames 90 ms, 200,000 frames 1.9 s),
 * and 10,000 frames is still a 6-minute animation at 25 fps.
 */
export const DEFAULT_MAX_FRAMES = 10_000;

export function pixelLimitError(
  what: string,
  width: number,
  height: number,
  frames: number,
  maxPixels: number,
): AppError {
  const total = width * height * frames;
  const size =
    frames > 1
      ? `${width}x${height} with ${frames} frames (${formatMegapixels(total)} in all)`
      : `${width}x${height} (${formatMegapixels(total)})`;
  return new AppError(
    'media_limit_exceeded',
    `${what} is ${size}; the limit is ${formatMegapixels(maxPixels)} (${LIMIT_SETTINGS.pixels})`,
  );
}

export function frameLimitError(frames: number, maxFrames: number): AppError {
  return new AppError(
    'media_limit_exceeded',
    `the animated image has ${frames} frames; the limit is ${maxFrames} (${LIMIT_SETTINGS.frames})`,
  );
}

export interface MeasuredLength {
  /** What the header declared, when the length was measured from the packets instead. */
  declared?: number;
  /** The measurement stopped at a bound: the media goes on past `seconds`. */
  atLeast?: boolean;
}

export function durationLimitError(
  kind: string,
  seconds: number,
  maxSeconds: number,
  how: MeasuredLength = {},
): AppError {
  const length = how.atLeast ? `goes on past ${formatDuration(seconds)}` : `is ${formatDuration(seconds)} long`;
  const header =
    how.declared === undefined
      ? ''
      : how.declared > 0
        ? ` (its header says ${formatDuration(how.declared)})`
        : ' (its header gives no length)';
  return new AppError(
    'media_limit_exceeded',
    `the ${kind} ${length}${header}; the limit is ${formatDuration(maxSeconds)} (${LIMIT_SETTINGS.duration})`,
  );
}
