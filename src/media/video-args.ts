// Pure ffmpeg argv for the video transform. The result runs as `ffmpeg <args>` unchanged, so a
// benchmark can time the identical command without mediad around it.
import { OPUS_LAYOUT_FILTER } from './audio-args.js';
import { ffmpegPreamble, fileUrl } from './ffmpeg-preamble.js';
import type { ProbeResult } from './probe.js';
import { crfFor, type VideoCodec } from './quality.js';
import { MediaTransformError } from './transform-error.js';
import { cappedLengthArgs, outputCap, type DurationLimit } from './duration-cap.js';
import { seekArgs, trimWindow } from './trim.js';

export type VideoFormat = 'mp4' | 'webm' | 'mov';
export type Fit = 'contain' | 'cover' | 'fill';
/** Where a crop or a pad keeps the picture (the video, image and image URL options). */
export const POSITIONS = [
  'center',
  'top',
  'bottom',
  'left',
  'right',
  'top_left',
  'top_right',
  'bottom_left',
  'bottom_right',
] as const;
export type Position = (typeof POSITIONS)[number];

export interface VideoOptions {
  format: VideoFormat;
  codec: VideoCodec;
  width?: number;
  height?: number;
  fit: Fit;
  position: Position;
  /** #rrggbb (an alpha suffix is ignored: video has no alpha here); fills `contain` padding. */
  background: string;
  fps?: number;
  /** 1–100. */
  quality: number;
  /** Bits per second; caps the video bitrate (CRF stays the target). */
  bitrate?: number;
  start?: number;
  end?: number;
  /** Encoder speed: x264/x265 preset name, vp9 cpu-used 0–8, av1 SVT preset 0–13. */
  preset?: string;
}

const CODECS_IN: Readonly<Record<VideoFormat, readonly VideoCodec[]>> = {
  mp4: ['h264', 'h265', 'av1'],
  mov: ['h264', 'h265'],
  webm: ['vp9', 'av1'],
};

export function defaultCodecFor(format: VideoFormat): VideoCodec {
  return format === 'webm' ? 'vp9' : 'h264';
}

export function codecAllowedIn(format: VideoFormat, codec: VideoCodec): boolean {
  return CODECS_IN[format].includes(codec);
}

const X26X_PRESETS = ['ultrafast', 'superfast', 'veryfast', 'faster', 'fast', 'medium', 'slow', 'slower', 'veryslow'];
const numeric = (max: number) => Array.from({ length: max + 1 }, (_, i) => String(i));
export const VIDEO_PRESETS: Readonly<Record<VideoCodec, readonly string[]>> = {
  h264: X26X_PRESETS,
  h265: X26X_PRESETS,
  vp9: numeric(8),
  av1: numeric(13),
};

/**
 * Fast defaults: a self-hosted box is CPU-bound, and at equal CRF the slower presets mostly buy
 * 10–20 % smaller files. x26x veryfast ≈ 3x medium's speed; vp9 cpu-used 4 and SVT preset 8
 * are the usual "good, not slow" settings.
 */
export const DEFAULT_PRESETS: Readonly<Record<VideoCodec, string>> = {
  h264: 'veryfast',
  h265: 'veryfast',
  vp9: '4',
  av1: '8',
};

export function presetAllowed(codec: VideoCodec, preset: string): boolean {
  return VIDEO_PRESETS[codec].includes(preset);
}

export function videoOutputFormat(format: VideoFormat): { extension: string; mime: string } {
  return format === 'mov'
    ? { extension: 'mov', mime: 'video/quicktime' }
    : { extension: format, mime: `video/${format}` };
}

/** yuv420p needs even sizes; rounds to the nearest even number, at least 2. */
export function even(n: number): number {
  return Math.max(2, Math.round(n / 2) * 2);
}

/** '#rrggbb' → '0xrrggbb'; anything else is a bug upstream, and must never reach a filtergraph. */
export function ffmpegColor(hex: string): string {
  const m = /^#([0-9a-f]{6})(?:[0-9a-f]{2})?$/i.exec(hex);
  if (!m) throw new RangeError(`background must be #rrggbb, got ${JSON.stringify(hex)}`);
  return `0x${m[1]!.toLowerCase()}`;
}

type Align = 'start' | 'middle' | 'end';

function align(position: Position): [x: Align, y: Align] {
  const x: Align = position.endsWith('left') ? 'start' : position.endsWith('right') ? 'end' : 'middle';
  const y: Align = position.startsWith('top') ? 'start' : position.startsWith('bottom') ? 'end' : 'middle';
  return [x, y];
}

/** Offset expression placing `inner` within `outer` (e.g. 'ow','iw' for pad, 'iw','ow' for crop). */
function offset(a: Align, outer: string, inner: string): string {
  return a === 'start' ? '0' : a === 'end' ? `${outer}-${inner}` : `(${outer}-${inner})/2`;
}

/** The -vf chain, or '' when frames pass through untouched. */
export function videoFilters(
  opts: Pick<VideoOptions, 'width' | 'height' | 'fit' | 'position' | 'background' | 'fps'>,
  source: Pick<ProbeResult, 'width' | 'height'>,
): string {
  const f: string[] = [];
  // Before scaling, so dropped frames are never scaled.
  if (opts.fps) f.push(`fps=${opts.fps}`);
  const { width, height } = opts;
  if (width && height) {
    const w = even(width);
    const h = even(height);
    const [ax, ay] = align(opts.position);
    if (opts.fit === 'fill') {
      f.push(`scale=${w}:${h}`);
    } else if (opts.fit === 'contain') {
      f.push(`scale=${w}:${h}:force_original_aspect_ratio=decrease:force_divisible_by=2`);
      f.push(`pad=${w}:${h}:${offset(ax, 'ow', 'iw')}:${offset(ay, 'oh', 'ih')}:color=${ffmpegColor(opts.background)}`);
    } else {
      f.push(`scale=${w}:${h}:force_original_aspect_ratio=increase`);
      f.push(`crop=${w}:${h}:${offset(ax, 'iw', 'ow')}:${offset(ay, 'ih', 'oh')}`);
    }
  } else if (width) {
    f.push(`scale=${even(width)}:-2`);
  } else if (height) {
    f.push(`scale=-2:${even(height)}`);
  } else if (!source.width || !source.height || source.width % 2 || source.height % 2) {
    f.push('scale=trunc(iw/2)*2:trunc(ih/2)*2');
  }
  // Square pixels, so players show exactly the size asked for.
  if (width || height) f.push('setsar=1');
  return f.join(',');
}

function encoderArgs(opts: VideoOptions): string[] {
  const crf = String(crfFor(opts.codec, opts.quality));
  const preset = opts.preset ?? DEFAULT_PRESETS[opts.codec];
  if (!presetAllowed(opts.codec, preset)) throw new RangeError(`preset ${preset} is not valid for ${opts.codec}`);
  const b = opts.bitrate ? Math.round(opts.bitrate) : 0;
  // Capped CRF: quality-driven, but never above maxrate over a 2 s buffer.
  const cap = b ? ['-maxrate', String(b), '-bufsize', String(2 * b)] : [];
  switch (opts.codec) {
    case 'h264':
      return ['-c:v', 'libx264', '-preset', preset, '-crf', crf, ...cap];
    case 'h265':
      // hvc1 tag: Apple players refuse HEVC tagged hev1 in MP4/MOV.
      return [
        '-c:v',
        'libx265',
        '-preset',
        preset,
        '-crf',
        crf,
        ...cap,
        '-x265-params',
        'log-level=error',
        '-tag:v',
        'hvc1',
      ];
    case 'vp9':
      // libvpx: -b:v 0 means pure CRF; a non-zero -b:v with -crf is its constrained-quality cap.
      return [
        '-c:v',
        'libvpx-vp9',
        '-crf',
        crf,
        '-b:v',
        String(b),
        '-row-mt',
        '1',
        '-deadline',
        'good',
        '-cpu-used',
        preset,
      ];
    case 'av1':
      return ['-c:v', 'libsvtav1', '-preset', preset, '-crf', crf, ...cap];
  }
}

/**
 * `limit`: MEDIAD_MAX_DURATION_SECONDS, as an output cap (see duration-cap.ts); a task always
 * passes it. Without it the argv has no cap (a benchmark timing the bare command).
 */
export function buildVideoArgs(
  inputPath: string,
  outputPath: string,
  opts: VideoOptions,
  source: ProbeResult,
  limit?: DurationLimit,
): string[] {
  if (!source.hasVideo) throw new MediaTransformError('invalid_for_input', 'the source has no video stream');
  if (!codecAllowedIn(opts.format, opts.codec))
    throw new RangeError(`${opts.codec} cannot be stored in ${opts.format}`);
  const win = trimWindow(opts, source.duration);
  const cap = limit && outputCap(win, source, limit);
  const vf = videoFilters(opts, source);
  const audio = !source.hasAudio
    ? ['-an']
    : opts.format === 'webm'
      ? ['-map', '0:a:0?', '-af', OPUS_LAYOUT_FILTER, '-c:a', 'libopus', '-b:a', '128k']
      : ['-map', '0:a:0?', '-c:a', 'aac', '-b:a', '128k'];
  return [
    ...ffmpegPreamble({ progress: true }),
    ...seekArgs(win),
    '-i',
    fileUrl(inputPath),
    // 'V': a video stream that is not cover art.
    '-map',
    '0:V:0',
    ...cappedLengthArgs(win, cap),
    ...(vf ? ['-vf', vf] : []),
    ...encoderArgs(opts),
    '-pix_fmt',
    'yuv420p',
    ...audio,
    // Metadata is dropped like for images (phone videos carry GPS location).
    '-sn',
    '-dn',
    '-map_metadata',
    '-1',
    '-map_chapters',
    '-1',
    ...(opts.format === 'webm' ? [] : ['-movflags', '+faststart']),
    '-f',
    opts.format,
    fileUrl(outputPath),
  ];
}
