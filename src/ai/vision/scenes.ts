// Scene cuts of a video (FFmpeg scdet), with close double detections (a flash, a fade) merged.
import { detectSceneCuts, MediaTransformError, probeFile, type ProbeResult, type SceneCut } from '../../media/index.js';

export interface SceneOptions {
  probe?: Pick<ProbeResult, 'hasVideo' | 'duration'>;
  /** scdet threshold 0–100 (default 10). */
  threshold?: number;
  /** Cuts closer than this (seconds, default 0.5) to the previous kept one are merged; the stronger wins. */
  minGapSeconds?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (percent: number) => void;
}

const UNLIMITED = { maxPixels: Number.MAX_SAFE_INTEGER, maxDurationSeconds: Number.MAX_SAFE_INTEGER };

export function mergeCloseCuts(cuts: readonly SceneCut[], minGap: number): SceneCut[] {
  const out: SceneCut[] = [];
  for (const c of cuts) {
    const prev = out[out.length - 1];
    if (prev && c.time - prev.time < minGap) {
      if (c.score > prev.score) out[out.length - 1] = c;
    } else {
      out.push(c);
    }
  }
  return out;
}

export async function findSceneCuts(video: string, opts: SceneOptions = {}): Promise<SceneCut[]> {
  const probe = opts.probe ?? (await probeFile(video, UNLIMITED, { signal: opts.signal }));
  if (!probe.hasVideo)
    throw new MediaTransformError(
      'invalid_for_input',
      'scene detection needs a video, and this file has no video stream',
    );
  const cuts = await detectSceneCuts(video, {
    threshold: opts.threshold,
    // About 0.02x real time at 320 px; the bound only stops a wedged ffmpeg.
    timeoutMs: opts.timeoutMs ?? 120_000 + (probe.duration ?? 3600) * 1000,
    signal: opts.signal,
    durationSeconds: probe.duration,
    onProgress: opts.onProgress,
  });
  return mergeCloseCuts(cuts, opts.minGapSeconds ?? 0.5);
}
