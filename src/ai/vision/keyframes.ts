// Still frames at given times (title cards for OCR, frames for vision models), through the
// media layer's frame grab.
import { join } from 'node:path';
import { grabVideoFrame, type DurationLimit } from '../../media/index.js';

export interface Keyframe {
  /** Seconds requested (clamped into the video). */
  time: number;
  /** PNG at the video's full resolution. */
  path: string;
}

export async function grabKeyframes(
  video: string,
  times: readonly number[],
  dir: string,
  opts: { duration?: number; timeoutMs?: number; signal?: AbortSignal; limit?: DurationLimit } = {},
): Promise<Keyframe[]> {
  // Times are clamped into the video, whose probed duration already passed the duration limit.
  const limit = opts.limit ?? { maxDurationSeconds: opts.duration ?? Number.MAX_SAFE_INTEGER };
  const out: Keyframe[] = [];
  for (const [i, t] of times.entries()) {
    // A seek to the very end finds no frame: stay a little inside.
    const time = Math.max(0, opts.duration !== undefined ? Math.min(t, opts.duration - 0.1) : t);
    const path = join(dir, `keyframe-${i}.png`);
    await grabVideoFrame(video, time, path, { timeoutMs: opts.timeoutMs ?? 60_000, signal: opts.signal }, limit);
    out.push({ time, path });
  }
  return out;
}
