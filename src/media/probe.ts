// Identifies an uploaded file from its headers: sharp metadata for images, ffprobe for
// audio/video. Limits are checked here, before anything decodes pixels or samples; the
// declared duration is checked against the packets at the file's end (probe-duration.ts).
import { open, stat } from 'node:fs/promises';
import type sharpModule from 'sharp';
import type { Metadata } from 'sharp';
import { loadSharp } from './sharp-lib.js';
import { ffprobeArgs } from './ffprobe-args.js';
import {} from './ffmpeg-preamble.js';
import {
  ANIMATED_IMAGE_FORMATS,
  containerFormat,
  DEFAULT_MAX_FRAMES,
  IMAGE_SIGNATURE_BYTES,
  durationLimitError,
  frameLimitError,
  imageFormat,
  mayBeImage,
  pixelLimitError,
  unsupported,
  type MediaKind,
} from './formats.js';
import { measureDuration, packetTime, type PacketTime } from './probe-duration.js';
import { mediaBinaries, ProcessError, runProcess } from './process-runner.js';

export interface ProbeResult {
  kind: MediaKind;
  /** Short name: mp4, mov, webm, mkv, m4a, mp3, wav, ogg, flac, aac, jpeg, png, webp, gif, avif, tiff… */
  format: string;
  /** Extension to store the file under, without the dot. */
  extension: string;
  mime: string;
  /** As displayed: EXIF orientation / video rotation already applied. */
  width?: number;
  height?: number;
  /** Seconds; audio and video only. */
  duration?: number;
  fps?: number;
  videoCodec?: string;
  audioCodec?: string;
  hasVideo: boolean;
  hasAudio: boolean;
  /** Bits per second, as the container reports it. */
  bitrate?: number;
  /** Animated images only. */
  frames?: number;
}

/** Structurally a subset of the service's `config.limits`, so callers can pass that object whole. */
export interface ProbeLimits {
  /** Width x height, times the frames of an animation. */
  maxPixels: number;
  maxDurationSeconds: number;
  /** Frames of an animated image; DEFAULT_MAX_FRAMES when unset. */
  maxFrames?: number;
}

export interface ProbeOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Check the header's duration against the packets at the end of the file (default true).
   * Off only for files mediad has just written itself.
   */
  verifyDuration?: boolean;
}

const DEFAULT_TIMEOUT_MS = 30_000;

export async function probeFile(path: string, limits: ProbeLimits, opts: ProbeOptions = {}): Promise<ProbeResult> {
  // A missing file is our bug, not the caller's media: let it surface as an internal error.
  const st = await stat(path);
  if (!st.isFile()) throw new Error(`probeFile: ${path} is not a regular file`);
  opts.signal?.throwIfAborted();
  return (await probeImage(path, limits)) ?? (await probeAudioVideo(path, limits, opts));
}

/** The first IMAGE_SIGNATURE_BYTES of the file (fewer if it is shorter). */
async function readHead(path: string): Promise<Uint8Array> {
  const fh = await open(path, 'r');
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(IMAGE_SIGNATURE_BYTES), 0, IMAGE_SIGNATURE_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** Whether this libvips build can decode HEIC (HEVC); the prebuilt sharp binaries cannot. */
function heicReadable(sharp: typeof sharpModule): boolean {
  return sharp.format.heif.input.fileSuffix?.includes('.heic') ?? false;
}

/** Null when sharp does not recognise the file or it is a format we do not take as an image. */
async function probeImage(path: string, limits: ProbeLimits): Promise<ProbeResult | null> {
  if (!mayBeImage(await readHead(path))) return null;
  const sharp = await loadSharp();
  let meta: Metadata;
  try {
    // Header only. limitInputPixels off so that the limit message below is ours, with the size.
    meta = await sharp(path, { limitInputPixels: false }).metadata();
  } catch {
    return null;
  }
  const fmt = imageFormat(meta.format, meta.compression, heicReadable(sharp));
  const width = meta.width;
  const height = meta.pageHeight ?? meta.height;
  if (!fmt || !width || !height) return null;

  const frames = ANIMATED_IMAGE_FORMATS.has(fmt.format) && (meta.pages ?? 1) > 1 ? (meta.pages ?? 1) : 1;
  // libvips pays per frame however small the frames are: 200,000 frames of 1x1 pass any pixel limit.
  const maxFrames = limits.maxFrames ?? DEFAULT_MAX_FRAMES;
  if (frames > maxFrames) throw frameLimitError(frames, maxFrames);
  // Animated images are decoded with all frames at once, so the limit is on the total.
  if (width * height * frames > limits.maxPixels) {
    throw pixelLimitError(frames > 1 ? 'the animated image' : 'the image', width, height, frames, limits.maxPixels);
  }
  // EXIF orientations 5-8 rotate by 90 degrees: report the size as displayed.
  const swap = (meta.orientation ?? 1) >= 5;
  return {
    kind: 'image',
    ...fmt,
    width: swap ? height : width,
    height: swap ? width : height,
    hasVideo: false,
    hasAudio: false,
    ...(frames > 1 ? { frames } : {}),
  };
}

interface FfStream {
  index?: number;
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  duration?: string;
  disposition?: { default?: number; attached_pic?: number };
  tags?: Record<string, string>;
  side_data_list?: { rotation?: number }[];
}

interface FfProbeOutput {
  format?: {
    format_name?: string;
    duration?: string;
    start_time?: string;
    bit_rate?: string;
    tags?: Record<string, string>;
  };
  streams?: FfStream[];
  packets?: Record<string, unknown>[];
}

async function runFfprobe(path: string, opts: ProbeOptions, tailFromSeconds?: number): Promise<FfProbeOutput> {
  let stdout: Buffer;
  try {
    ({ stdout } = await runProcess(mediaBinaries().ffprobe, ffprobeArgs(path, tailFromSeconds), {
      timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      signal: opts.signal,
      // TAIL_PACKETS entries of ~120 bytes fit easily.
      maxOutputBytes: 8 * 1024 * 1024,
    }));
  } catch (err) {
    // Our own failures (cancelled, ffprobe missing) are not a verdict on the file.
    if (err instanceof ProcessError && (err.reason === 'aborted' || err.reason === 'spawn')) throw err;
    // A demuxer that cannot seek fails the tail read only: probe the header alone, the
    // duration check then scans the packets instead (out.packets stays undefined).
    if (tailFromSeconds !== undefined) return runFfprobe(path, opts);
    throw unsupported(err);
  }
  try {
    return JSON.parse(stdout.toString('utf8')) as FfProbeOutput;
  } catch (err) {
    throw unsupported(err);
  }
}

/** start_time may be negative (WebM, MP4 edit lists). */
function signed(value: string | undefined): number | undefined {
  const n = value === undefined ? NaN : Number.parseFloat(value);
  return Number.isFinite(n) ? n : undefined;
}

function num(value: string | number | undefined): number | undefined {
  const n = typeof value === 'number' ? value : value === undefined ? NaN : Number.parseFloat(value);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/** "30000/1001" → 29.97; "0/0" → undefined. */
function rate(value: string | undefined): number | undefined {
  const [n, d] = (value ?? '').split('/').map(Number);
  return n && d ? Math.round((n / d) * 1000) / 1000 : undefined;
}

function isRotated(s: FfStream): boolean {
  const deg = s.side_data_list?.find((d) => typeof d.rotation === 'number')?.rotation ?? Number(s.tags?.rotate ?? 0);
  return Math.abs(Math.round(deg / 90)) % 2 === 1;
}

async function probeAudioVideo(path: string, limits: ProbeLimits, opts: ProbeOptions): Promise<ProbeResult> {
  const verify = opts.verifyDuration ?? true;
  // The tail read seeks to the limit: a file that ends before it lands on its last keyframe, one
  // that goes on past it shows packets beyond the limit.
  const out = await runFfprobe(path, opts, verify ? limits.maxDurationSeconds : undefined);
  const streams = out.streams ?? [];
  const video = streams.filter((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  const audio = streams.filter((s) => s.codec_type === 'audio');
  const mainVideo = video.find((s) => s.disposition?.default) ?? video[0];
  const mainAudio = audio.find((s) => s.disposition?.default) ?? audio[0];
  const kind = mainVideo ? 'video' : 'audio';
  const main = mainVideo ?? mainAudio;
  // A stream ffmpeg has no decoder for has no codec_name: nothing we could process.
  if (!main?.codec_name || !out.format?.format_name) throw unsupported();
  // A frame size ffmpeg rejects (60000x60000) probes as 0x0: no pixel limit could apply to it,
  // and every task on it would fail. Any video stream may be decoded by a later step.
  if (video.some((s) => !s.width || !s.height)) throw unsupported();

  const codecs = (type: string) => streams.filter((s) => s.codec_type === type).map((s) => s.codec_name ?? '?');
  const fmt = containerFormat({
    formatName: out.format.format_name,
    majorBrand: out.format.tags?.major_brand,
    kind,
    videoCodecs: video.map((s) => s.codec_name ?? '?'),
    audioCodecs: codecs('audio'),
    subtitleCodecs: codecs('subtitle'),
  });
  if (!fmt) throw unsupported();

  const declared = num(out.format.duration) ?? (Math.max(0, ...streams.map((s) => num(s.duration) ?? 0)) || undefined);
  const length = verify
    ? await measureDuration(
        path,
        {
          declared,
          startTime: signed(out.format.start_time) ?? 0,
          tail: out.packets?.map(packetTime).filter((p): p is PacketTime => p !== null),
          streams: new Set([...video, ...audio].map((s) => s.index ?? streams.indexOf(s))),
        },
        limits.maxDurationSeconds,
        opts,
      )
    : { seconds: declared, measured: false, atLeast: false };
  const duration = length.seconds ?? 0;
  if (duration > limits.maxDurationSeconds) {
    throw durationLimitError(
      kind,
      duration,
      limits.maxDurationSeconds,
      length.measured ? { declared: declared ?? 0, atLeast: length.atLeast } : {},
    );
  }
  // Every video stream could be decoded by a later step, so each one must fit the limit.
  for (const s of video) {
    if (s.width && s.height && s.width * s.height > limits.maxPixels) {
      throw pixelLimitError('the video', s.width, s.height, 1, limits.maxPixels);
    }
  }

  const result: ProbeResult = { kind, ...fmt, hasVideo: video.length > 0, hasAudio: audio.length > 0 };
  if (duration > 0) result.duration = duration;
  const bitrate = num(out.format.bit_rate);
  if (bitrate) result.bitrate = Math.round(bitrate);
  if (mainVideo) {
    const swap = isRotated(mainVideo);
    if (mainVideo.width && mainVideo.height) {
      result.width = swap ? mainVideo.height : mainVideo.width;
      result.height = swap ? mainVideo.width : mainVideo.height;
    }
    const fps = rate(mainVideo.avg_frame_rate) ?? rate(mainVideo.r_frame_rate);
    if (fps) result.fps = fps;
    result.videoCodec = mainVideo.codec_name;
  }
  if (mainAudio?.codec_name) result.audioCodec = mainAudio.codec_name;
  return result;
}
