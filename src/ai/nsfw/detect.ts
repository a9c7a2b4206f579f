// NSFW scores for an image, or for a video sampled every `interval` seconds with a timeline of
// the flagged spans. Pixels come from src/media (sharp / ffmpeg); the model is the warm nsfwjs one.
import { imageToRgb, MediaTransformError, probeFile, videoRgbFrames, type ProbeResult } from '../../media/index.js';
import type { EngineInfo } from '../engine.js';
import { progressReporter } from '../progress.js';
import { NSFW_INPUT_SIZE, nsfwModel } from './model.js';
import {
  flaggedSpans,
  scoresFromClasses,
  verdict,
  type FlaggedSpan,
  type FrameScores,
  type NsfwClasses,
  type NsfwScores,
} from './scores.js';

export interface NsfwOptions {
  /** A score at or above this (0–1, default 0.5) sets `detected`. */
  threshold?: number;
  maxPixels?: number;
  signal?: AbortSignal;
}

export interface NsfwVideoOptions extends NsfwOptions {
  probe?: Pick<ProbeResult, 'hasVideo' | 'duration'>;
  /** Seconds between sampled frames (default 1; widened so no more than maxFrames are taken). */
  interval?: number;
  maxFrames?: number;
  onProgress?: (percent: number) => void;
}

export interface NsfwResult extends NsfwScores {
  detected: boolean;
  confidence: number;
  /** The model's class probabilities (for a video: of the frame with the highest sexual score). */
  classes: NsfwClasses;
  /** Video only: spans of consecutive flagged frames. */
  timeline?: FlaggedSpan[];
  /** Video only: how it was sampled, and frames handled per second (decoding and classifying). */
  frames?: { interval: number; count: number; per_second: number };
  engine: EngineInfo;
}

const UNLIMITED = { maxPixels: Number.MAX_SAFE_INTEGER, maxDurationSeconds: Number.MAX_SAFE_INTEGER };
const BATCH = 16;

export async function nsfwImage(path: string, opts: NsfwOptions = {}): Promise<NsfwResult> {
  const model = await nsfwModel();
  opts.signal?.throwIfAborted();
  const classes = await model.classify(await imageToRgb(path, NSFW_INPUT_SIZE, { maxPixels: opts.maxPixels }));
  const scores = scoresFromClasses(classes);
  return { ...scores, ...verdict(scores, opts.threshold ?? 0.5), classes, engine: model.engine };
}

export async function nsfwVideo(path: string, opts: NsfwVideoOptions = {}): Promise<NsfwResult> {
  const probe = opts.probe ?? (await probeFile(path, UNLIMITED, { signal: opts.signal }));
  if (!probe.hasVideo)
    throw new MediaTransformError(
      'invalid_for_input',
      'NSFW detection needs an image or a video, and this file has no video stream',
    );
  const duration = probe.duration ?? 0;
  const maxFrames = opts.maxFrames ?? 3600;
  const interval = Math.max(opts.interval ?? 1, duration / maxFrames, 0.04);
  const total = Math.max(1, Math.ceil(duration / interval));
  const threshold = opts.threshold ?? 0.5;
  const model = await nsfwModel();
  const progress = progressReporter(opts.onProgress);

  const frames: (FrameScores & { classes: NsfwClasses })[] = [];
  // Frames per second end to end: decoding and scaling with ffmpeg plus classifying.
  const started = performance.now();
  for (let first = 0; first < total; first += BATCH) {
    const batch = await videoRgbFrames(path, {
      start: first * interval,
      interval,
      count: Math.min(BATCH, total - first),
      size: NSFW_INPUT_SIZE,
      timeoutMs: 120_000,
      signal: opts.signal,
    });
    if (batch.length === 0) break; // the video ended before its declared duration
    for (const [i, image] of batch.entries()) {
      opts.signal?.throwIfAborted();
      const classes = await model.classify(image);
      frames.push({ time: (first + i) * interval, ...scoresFromClasses(classes), classes });
    }
    progress.report(frames.length / total);
  }
  if (frames.length === 0)
    throw new MediaTransformError('invalid_for_input', 'the video has no frame that could be read');

  const elapsedMs = performance.now() - started;
  const worst = frames.reduce((a, b) => (b.sexual > a.sexual ? b : a));
  const scores = { nudity: Math.max(...frames.map((f) => f.nudity)), sexual: worst.sexual };
  progress.done();
  return {
    ...scores,
    ...verdict(scores, threshold),
    classes: worst.classes,
    timeline: flaggedSpans(frames, interval, threshold, duration || frames.length * interval),
    frames: { interval, count: frames.length, per_second: elapsedMs > 0 ? (frames.length * 1000) / elapsedMs : 0 },
    engine: model.engine,
  };
}
