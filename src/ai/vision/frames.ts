// Frames of a video (or the image itself) as JPEG data URLs for vision models.
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { imageDataUrl } from '../../media/index.js';
import { grabKeyframes } from './keyframes.js';

export interface FrameImage {
  /** Seconds into the video; absent for a still image. */
  time?: number;
  url: string;
}

/** `count` times spread evenly over the video, each in the middle of its slice. */
export function evenTimes(duration: number, count: number): number[] {
  const n = Math.max(1, Math.floor(count));
  return Array.from({ length: n }, (_, i) => (duration > 0 ? ((i + 0.5) * duration) / n : 0));
}

export async function videoFrameUrls(
  video: string,
  times: readonly number[],
  opts: { workDir: string; duration?: number; maxSide?: number; signal?: AbortSignal },
): Promise<FrameImage[]> {
  const dir = await mkdtemp(join(opts.workDir, 'frames-'));
  try {
    const frames = await grabKeyframes(video, times, dir, { duration: opts.duration, signal: opts.signal });
    const out: FrameImage[] = [];
    for (const f of frames)
      out.push({ time: f.time, url: await imageDataUrl(f.path, { maxSide: opts.maxSide ?? 768 }) });
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function imageUrl(path: string, opts: { maxSide?: number; maxPixels?: number } = {}): Promise<FrameImage> {
  return { url: await imageDataUrl(path, { maxSide: opts.maxSide ?? 1024, maxPixels: opts.maxPixels }) };
}
