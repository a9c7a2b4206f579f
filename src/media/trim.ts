// start/end trimming shared by the video and audio transforms.
import { formatSeconds } from './ffprobe-args.js';
import {} from './ffmpeg-preamble.js';
import type { ProbeResult } from './probe.js';
import { MediaTransformError } from './transform-error.js';

export interface TrimOptions {
  /** Seconds from the start of the source. */
  start?: number;
  /** Seconds from the start of the source (not a length). */
  end?: number;
}

export interface TrimWindow {
  start: number;
  /** Undefined: to the end of the source. */
  length?: number;
}

/** Checks the window against the source; a window outside it is the caller's mistake. */
export function trimWindow(opts: TrimOptions, sourceDuration: number | undefined): TrimWindow {
  const start = opts.start !== undefined && opts.start > 0 ? opts.start : 0;
  if (sourceDuration !== undefined && start > 0 && start >= sourceDuration) {
    throw new MediaTransformError(
      'invalid_for_input',
      `start (${formatSeconds(start)} s) is at or after the end of the source (${formatSeconds(sourceDuration)} s)`,
    );
  }
  if (opts.end === undefined) return { start };
  if (opts.end <= start) {
    throw new MediaTransformError(
      'invalid_for_input',
      `end (${formatSeconds(opts.end)} s) must be after start (${formatSeconds(start)} s)`,
    );
  }
  return { start, length: opts.end - start };
}

/** `-ss` placed before `-i`: ffmpeg seeks by index, then decodes only from the keyframe before. */
export function seekArgs(win: TrimWindow): string[] {
  return win.start > 0 ? ['-ss', formatSeconds(win.start)] : [];
}

/** Seconds the output will last (for progress); 0 when nothing is known. */
export function expectedDuration(opts: TrimOptions, source: Pick<ProbeResult, 'duration'>): number {
  const total = source.duration;
  const start = opts.start !== undefined && opts.start > 0 ? opts.start : 0;
  const end = opts.end === undefined ? total : total === undefined ? opts.end : Math.min(opts.end, total);
  return end === undefined ? 0 : Math.max(0, end - start);
}
