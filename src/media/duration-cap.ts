// MEDIAD_MAX_DURATION_SECONDS enforced while decoding, not only by the probe: a header can lie
// in ways a probe does not catch, and files probed before the probe looked past the header
// keep their old duration. Every ffmpeg run that decodes a stretch of the source gets an
// output length cap, so no source position past the limit is decoded.
//
// Hitting the cap fails the task with media_limit_exceeded instead of storing the output cut
// at the limit: a silently shortened output would be a lie too, and the caller could not tell
// it from the whole. (Unless the source really is as long as the limit: then nothing is cut.)
import { AppError } from '../errors.js';
import { formatSeconds } from './ffprobe-args.js';
import {} from './ffmpeg-preamble.js';
import { durationLimitError, formatDuration, LIMIT_SETTINGS } from './formats.js';
import type { ProbeResult } from './probe.js';
import { expectedDuration, trimWindow, type TrimOptions, type TrimWindow } from './trim.js';

export interface DurationLimit {
  maxDurationSeconds: number;
}

/** Frame and sample granularity: an output within this of the cap ran into it. */
export const CAP_TOLERANCE_SECONDS = 0.25;

/**
 * Refusals before anything runs: a source longer than the limit (its stored probe predates a
 * lower limit) or a start past the limit. Returns the output cap in seconds: the limit minus the
 * start, since the source positions decoded run from `start` on.
 */
export function outputCap(
  win: TrimWindow,
  source: Pick<ProbeResult, 'kind' | 'duration'>,
  limit: DurationLimit,
): number {
  const max = limit.maxDurationSeconds;
  if (source.duration !== undefined && source.duration > max)
    throw durationLimitError(source.kind, source.duration, max);
  if (win.start >= max) {
    throw new AppError(
      'media_limit_exceeded',
      `start (${formatSeconds(win.start)} s) is past the duration limit of ${formatDuration(max)} (${LIMIT_SETTINGS.duration})`,
    );
  }
  return max - win.start;
}

/**
 * Output `-t` (timestamps restart at 0 after the input seek, so it is the kept length): the
 * trim's length, or the cap when that is shorter or the trim has no end.
 */
export function cappedLengthArgs(win: TrimWindow, cap: number | undefined): string[] {
  const length = cap === undefined ? win.length : Math.min(win.length ?? Number.POSITIVE_INFINITY, cap);
  return length !== undefined ? ['-t', formatSeconds(length)] : [];
}

/**
 * After the run: throws when the output ran into the cap although the source, by its probe,
 * ends before it. That means the source holds more than it declared, at least up to the limit.
 */
export function checkOutputCap(
  outputSeconds: number | undefined,
  opts: TrimOptions,
  source: Pick<ProbeResult, 'kind' | 'duration'>,
  limit: DurationLimit,
): void {
  const win = trimWindow(opts, source.duration);
  const cap = limit.maxDurationSeconds - win.start;
  if (win.length !== undefined && win.length <= cap) return; // the trim ends the output first
  if (outputSeconds === undefined || outputSeconds < cap - CAP_TOLERANCE_SECONDS) return;
  const expected = source.duration === undefined ? undefined : expectedDuration(opts, source);
  if (expected !== undefined && expected >= cap - CAP_TOLERANCE_SECONDS) return; // it is that long
  throw durationLimitError(source.kind, limit.maxDurationSeconds, limit.maxDurationSeconds, {
    declared: source.duration ?? 0,
    atLeast: true,
  });
}

/** A frame grab decodes from the keyframe before `atSeconds` to it: the time must be within the limit. */
export function checkFrameTime(atSeconds: number, limit: DurationLimit): void {
  if (atSeconds > limit.maxDurationSeconds) {
    throw new AppError(
      'media_limit_exceeded',
      `the frame at ${formatSeconds(atSeconds)} s is past the duration limit of ${formatDuration(limit.maxDurationSeconds)} (${LIMIT_SETTINGS.duration})`,
    );
  }
}

/** Input `-t` for steps that read from the start and pick frames (storyboards): reading stops at the limit. */
export function inputLimitArgs(limit: DurationLimit): string[] {
  return ['-t', formatSeconds(limit.maxDurationSeconds)];
}
