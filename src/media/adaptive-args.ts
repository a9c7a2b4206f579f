// Pure ffmpeg argv for the adaptive_video kind: one run that encodes every rung of the ladder and
// one shared AAC rendition into CMAF (fMP4) segments, with the DASH muxer writing the MPD and the
// HLS playlists over the same segments (`-hls_playlist 1`). The result runs as `ffmpeg <args>`
// unchanged, so the benchmark times the identical command without mediad around it.
import { ffmpegPreamble, fileUrl } from './ffmpeg-preamble.js';
import { cappedLengthArgs, outputCap, type DurationLimit } from './duration-cap.js';
import type { ProbeResult } from './probe.js';
import { MediaTransformError } from './transform-error.js';
import { trimWindow } from './trim.js';
import { DEFAULT_PRESETS, even } from './video-args.js';

export type AdaptiveCodec = 'h264' | 'h265' | 'av1';

/** One rendition of the ladder: its height in pixels and its video bitrate in bits per second. */
export interface Rung {
  height: number;
  bitrate: number;
}

export interface AdaptiveOptions {
  /** Highest first; heights distinct and even. */
  ladder: Rung[];
  codec: AdaptiveCodec;
  segmentSeconds: number;
}

/** The h264 ladder (height, bit/s): the rungs at or below the source's height are the default. */
export const H264_LADDER: readonly Rung[] = [
  { height: 1080, bitrate: 5_000_000 },
  { height: 720, bitrate: 2_800_000 },
  { height: 480, bitrate: 1_400_000 },
  { height: 360, bitrate: 800_000 },
  { height: 240, bitrate: 400_000 },
];

/** Bitrate of the other codecs relative to h264 for the same picture quality. */
export const CODEC_BITRATE_FACTOR: Readonly<Record<AdaptiveCodec, number>> = { h264: 1, h265: 0.65, av1: 0.55 };

/** The FFmpeg encoder each codec needs (checked against `ffmpeg -encoders` before a run). */
export const ADAPTIVE_ENCODERS: Readonly<Record<AdaptiveCodec, string>> = {
  h264: 'libx264',
  h265: 'libx265',
  av1: 'libsvtav1',
};

export const AUDIO_BITRATE = 128_000;

/** The default bitrate of a rung of this height: the table's value for the nearest rung at or below it. */
export function defaultBitrate(height: number, codec: AdaptiveCodec): number {
  const base = H264_LADDER.find((r) => r.height <= height) ?? H264_LADDER[H264_LADDER.length - 1]!;
  const scaled = height < base.height ? (base.bitrate * height) / base.height : base.bitrate;
  return Math.round((scaled * CODEC_BITRATE_FACTOR[codec]) / 1000) * 1000;
}

/**
 * The ladder a task encodes: the rungs asked for (bitrates filled in from the table), or the
 * table's rungs at or below the source's height; a source smaller than the lowest rung gets one
 * rung at its own height.
 */
export function resolveLadder(
  requested: readonly { height: number; bitrate?: number }[] | undefined,
  sourceHeight: number,
  codec: AdaptiveCodec,
): Rung[] {
  const rungs = requested
    ? requested.map((r) => ({ height: even(r.height), bitrate: r.bitrate ?? defaultBitrate(r.height, codec) }))
    : H264_LADDER.filter((r) => r.height <= sourceHeight).map((r) => ({
        height: r.height,
        bitrate: Math.round(r.bitrate * CODEC_BITRATE_FACTOR[codec]),
      }));
  if (rungs.length === 0) rungs.push({ height: even(sourceHeight), bitrate: defaultBitrate(sourceHeight, codec) });
  return rungs.sort((a, b) => b.height - a.height);
}

/** Problems of a requested ladder against the source's height (each names its rung). */
export function ladderProblems(
  ladder: readonly { height: number }[] | undefined,
  sourceHeight: number | undefined,
): { field: string; message: string }[] {
  if (!ladder || sourceHeight === undefined) return [];
  return ladder.flatMap((r, i) =>
    r.height > sourceHeight
      ? [{ field: `ladder[${i}].height`, message: `${r.height} is above the source's height of ${sourceHeight}` }]
      : [],
  );
}

function encoderArgs(opts: AdaptiveOptions, gop: number): string[] {
  const preset = DEFAULT_PRESETS[opts.codec];
  switch (opts.codec) {
    case 'h264':
      // Closed GOPs of one segment, no scene-cut keyframes: every segment starts on an IDR frame
      // at the same time in every rung.
      return [
        '-c:v',
        'libx264',
        '-preset',
        preset,
        '-g',
        String(gop),
        '-keyint_min',
        String(gop),
        '-sc_threshold',
        '0',
        '-flags',
        '+cgop',
      ];
    case 'h265':
      return [
        '-c:v',
        'libx265',
        '-preset',
        preset,
        '-x265-params',
        `log-level=error:keyint=${gop}:min-keyint=${gop}:scenecut=0:open-gop=0`,
        '-tag:v',
        'hvc1',
      ];
    case 'av1':
      return ['-c:v', 'libsvtav1', '-preset', preset, '-g', String(gop), '-svtav1-params', 'scd=0'];
  }
}

/** Package entry names FFmpeg writes (see buildAdaptiveArgs): flat, in one directory. */
export const MASTER_PLAYLIST = 'master.m3u8';
export const DASH_MANIFEST = 'manifest.mpd';

/**
 * The whole ladder in one run into `outputDir` (manifest.mpd, master.m3u8, media_<n>.m3u8,
 * init_<n>.mp4, seg_<n>_<number>.m4s; stream n = rung n, the audio last). `limit`: the duration
 * cap of the video kind; without it the argv has no cap (a benchmark timing the bare command).
 */
export function buildAdaptiveArgs(
  inputPath: string,
  outputDir: string,
  opts: AdaptiveOptions,
  source: ProbeResult,
  limit?: DurationLimit,
): string[] {
  if (!source.hasVideo) throw new MediaTransformError('invalid_for_input', 'the source has no video stream');
  if (opts.ladder.length === 0) throw new RangeError('the ladder has no rung');
  const seg = opts.segmentSeconds;
  const win = trimWindow({}, source.duration);
  const cap = limit && outputCap(win, source, limit);
  const fps = source.fps && source.fps > 0 && source.fps <= 240 ? source.fps : 30;
  const gop = Math.max(1, Math.round(fps * seg));
  const n = opts.ladder.length;
  const split = n > 1 ? `split=${n}${opts.ladder.map((_, i) => `[s${i}]`).join('')};` : '';
  const scales = opts.ladder
    .map((r, i) => `${n > 1 ? `[s${i}]` : '[0:V:0]'}scale=-2:${even(r.height)},format=yuv420p[v${i}]`)
    .join(';');
  const graph = n > 1 ? `[0:V:0]${split}${scales}` : scales;
  const perRung = opts.ladder.flatMap((r, i) => [
    '-map',
    `[v${i}]`,
    `-b:v:${i}`,
    String(r.bitrate),
    `-maxrate:v:${i}`,
    String(Math.round(r.bitrate * 1.1)),
    `-bufsize:v:${i}`,
    String(Math.round(r.bitrate * 1.5)),
  ]);
  const audio = source.hasAudio ? ['-map', '0:a:0', '-c:a', 'aac', '-b:a', String(AUDIO_BITRATE), '-ac', '2'] : ['-an'];
  return [
    ...ffmpegPreamble({ progress: true }),
    // A source that fails to decode mid-way fails the run (FFmpeg would otherwise skip the broken
    // part and end with exit 0 and a package with a gap or a cut).
    '-xerror',
    '-i',
    fileUrl(inputPath),
    '-filter_complex',
    graph,
    ...perRung,
    ...audio,
    ...cappedLengthArgs(win, cap),
    ...encoderArgs(opts, gop),
    '-force_key_frames:v',
    `expr:gte(t,n_forced*${seg})`,
    '-sn',
    '-dn',
    '-map_metadata',
    '-1',
    '-map_chapters',
    '-1',
    '-f',
    'dash',
    '-seg_duration',
    String(seg),
    '-use_template',
    '1',
    '-use_timeline',
    '1',
    '-hls_playlist',
    '1',
    '-hls_master_name',
    MASTER_PLAYLIST,
    '-adaptation_sets',
    source.hasAudio ? 'id=0,streams=v id=1,streams=a' : 'id=0,streams=v',
    '-init_seg_name',
    'init_$RepresentationID$.mp4',
    '-media_seg_name',
    'seg_$RepresentationID$_$Number%05d$.m4s',
    fileUrl(`${outputDir}/${DASH_MANIFEST}`),
  ];
}
