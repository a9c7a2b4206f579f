// Thumbnail storyboards for players: one sprite image of evenly spaced frames plus a WebVTT
// track whose cues point into it with #xywh media fragments.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { inputLimitArgs, outputCap, type DurationLimit } from './duration-cap.js';
import { runFfmpeg, type FfmpegRunOptions } from './ffmpeg-run.js';
import { ffmpegPreamble, fileUrl, oneStreamOf } from './ffmpeg-preamble.js';
import type { ProbeResult } from './probe.js';
import { MediaTransformError } from './transform-error.js';
import { even } from './video-args.js';

export interface StoryboardOptions {
  /** Number of tiles; wins over `interval`. */
  count?: number;
  /** Seconds between tiles. */
  interval?: number;
  /** Tile width in px (default 160); the height follows the source's aspect ratio. */
  width?: number;
  columns?: number;
  format: 'jpeg' | 'webp';
}

export interface StoryboardPlan {
  /** Start time of each tile's cue, which is also where its frame is taken. */
  times: number[];
  interval: number;
  columns: number;
  rows: number;
  tileWidth: number;
  tileHeight: number;
}

export interface StoryboardTile {
  start: number;
  end: number;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface StoryboardResult {
  spritePath: string;
  spriteWidth: number;
  spriteHeight: number;
  mime: string;
  tiles: StoryboardTile[];
}

/** Keeps the sprite small enough to load in a player and under WebP's 16383 px side limit. */
export const MAX_STORYBOARD_TILES = 100;
export const DEFAULT_TILE_WIDTH = 160;
const DEFAULT_COLUMNS = 10;
const MAX_SPRITE_SIDE = 16383;

/**
 * Without count or interval: one tile per second, spread out to at most 100 tiles (so a 2 s
 * clip gets 2, a 10 min video one every 6 s). An interval that would exceed 100 tiles is widened.
 */
export function planStoryboard(
  durationSeconds: number,
  opts: Omit<StoryboardOptions, 'format'>,
  source: { width?: number; height?: number },
): StoryboardPlan {
  const d = Number.isFinite(durationSeconds) && durationSeconds > 0 ? durationSeconds : 0;
  let count: number;
  let interval: number;
  if (opts.count) {
    count = Math.min(MAX_STORYBOARD_TILES, Math.max(1, Math.round(opts.count)));
    interval = d > 0 ? d / count : 1;
  } else {
    interval = Math.max(opts.interval ?? 1, d / MAX_STORYBOARD_TILES);
    // The epsilon keeps float noise (2.0000001 s) from adding a tile past the last frame.
    count = Math.max(1, Math.ceil(d / interval - 1e-6));
  }
  // Millisecond steps: the fps filter gets the same interval as the cues (1000/ms frames/s).
  interval = Math.max(0.001, Math.round(interval * 1000) / 1000);
  const tileWidth = even(opts.width ?? DEFAULT_TILE_WIDTH);
  const aspect = source.width && source.height ? source.height / source.width : 9 / 16;
  const tileHeight = even(tileWidth * aspect);
  const maxColumns = Math.max(1, Math.floor(MAX_SPRITE_SIDE / tileWidth));
  const columns = Math.max(1, Math.min(count, opts.columns ?? DEFAULT_COLUMNS, maxColumns));
  const rows = Math.ceil(count / columns);
  if (rows * tileHeight > MAX_SPRITE_SIDE) {
    throw new MediaTransformError(
      'invalid_for_input',
      `a storyboard of ${count} tiles of ${tileWidth}x${tileHeight} px does not fit in one image`,
    );
  }
  return {
    times: Array.from({ length: count }, (_, i) => i * interval),
    interval,
    columns,
    rows,
    tileWidth,
    tileHeight,
  };
}

/**
 * One ffmpeg run: pick a frame per interval, scale it, lay the tiles out in one image. The plan
 * ends at the probed duration; the input `-t` stops reading at the duration limit besides, so a
 * source longer than its header says is never decoded past the limit.
 */
export function storyboardArgs(
  inputPath: string,
  spritePath: string,
  plan: StoryboardPlan,
  format: 'jpeg' | 'webp',
  limit: DurationLimit,
): string[] {
  const filters = [
    `fps=1000/${Math.round(plan.interval * 1000)}`,
    `scale=${plan.tileWidth}:${plan.tileHeight}:flags=area`,
    'setsar=1',
    // nb_frames: the sprite is emitted after the last planned tile; unused cells stay black.
    `tile=${plan.columns}x${plan.rows}:nb_frames=${plan.times.length}`,
  ];
  const encoder =
    format === 'jpeg' ? ['-c:v', 'mjpeg', '-q:v', '4', '-pix_fmt', 'yuvj420p'] : ['-c:v', 'libwebp', '-quality', '75'];
  return [
    ...ffmpegPreamble({ progress: true }),
    ...inputLimitArgs(limit),
    ...oneStreamOf(inputPath, 'video'),
    '-vf',
    filters.join(','),
    '-frames:v',
    '1',
    ...encoder,
    '-f',
    'image2',
    '-update',
    '1',
    fileUrl(spritePath),
  ];
}

export function storyboardTiles(plan: StoryboardPlan, durationSeconds: number): StoryboardTile[] {
  const n = plan.times.length;
  return plan.times.map((start, i) => ({
    start,
    end: i === n - 1 ? Math.max(durationSeconds, start + 0.001) : start + plan.interval,
    x: (i % plan.columns) * plan.tileWidth,
    y: Math.floor(i / plan.columns) * plan.tileHeight,
    w: plan.tileWidth,
    h: plan.tileHeight,
  }));
}

/**
 * Progress: the sprite is one output frame written at the end, so ffmpeg's output time stays at
 * 0 and only the final 100 is reported.
 */
export async function buildStoryboard(
  inputPath: string,
  outDir: string,
  opts: StoryboardOptions,
  source: ProbeResult,
  run: FfmpegRunOptions,
  limit: DurationLimit,
): Promise<StoryboardResult> {
  if (!source.hasVideo) throw new MediaTransformError('invalid_for_input', 'the source has no video stream');
  // The tiles cover what the probe measured; a stored probe from before a lower limit is refused.
  outputCap({ start: 0 }, source, limit);
  const duration = source.duration ?? 0;
  const plan = planStoryboard(duration, opts, source);
  const spritePath = join(outDir, `storyboard.${opts.format === 'jpeg' ? 'jpg' : 'webp'}`);
  await runFfmpeg(storyboardArgs(inputPath, spritePath, plan, opts.format, limit), run);
  const st = await stat(spritePath).catch(() => null);
  if (!st || st.size === 0) throw new MediaTransformError('transform_failed', 'ffmpeg wrote no storyboard image');
  return {
    spritePath,
    spriteWidth: plan.columns * plan.tileWidth,
    spriteHeight: plan.rows * plan.tileHeight,
    mime: opts.format === 'jpeg' ? 'image/jpeg' : 'image/webp',
    tiles: storyboardTiles(plan, duration),
  };
}

/** HH:MM:SS.mmm as WebVTT requires (hours always present). */
export function vttTime(seconds: number): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}.${pad(ms % 1000, 3)}`;
}

export function storyboardVtt(tiles: readonly StoryboardTile[], spriteUrl: string): string {
  const cues = tiles.map(
    (t) => `${vttTime(t.start)} --> ${vttTime(t.end)}\n${spriteUrl}#xywh=${t.x},${t.y},${t.w},${t.h}\n`,
  );
  return ['WEBVTT\n', ...cues].join('\n');
}
