// Where long audio is cut into chunks: near every `chunkSeconds`, at the quietest moment within
// a search window, so a chunk boundary falls in a pause and no word is split between two runs.

export interface Chunk {
  start: number;
  end: number;
}

export interface ChunkPlanOptions {
  /** Target chunk length (seconds). */
  chunkSeconds: number;
  /** How far before/after each target the cut may move to find quiet (seconds, default 10). */
  searchSeconds?: number;
}

/** Targets and the windows searched around them; a tail shorter than a quarter chunk is not split off. */
export function chunkTargets(duration: number, opts: ChunkPlanOptions): { target: number; from: number; to: number }[] {
  const size = Math.max(1, opts.chunkSeconds);
  const search = Math.min(opts.searchSeconds ?? 10, size / 3);
  if (!(duration > size * 1.25)) return [];
  const out: { target: number; from: number; to: number }[] = [];
  for (let t = size; t < duration - size / 4; t += size)
    out.push({ target: t, from: t - search, to: Math.min(duration, t + search) });
  return out;
}

/** Chunks from chosen cut times (sorted, inside (0, duration)). */
export function chunksFromCuts(duration: number, cuts: readonly number[]): Chunk[] {
  const points = [0, ...cuts.filter((c) => c > 0 && c < duration), duration];
  const out: Chunk[] = [];
  for (let i = 0; i + 1 < points.length; i++)
    if (points[i + 1]! > points[i]!) out.push({ start: points[i]!, end: points[i + 1]! });
  return out;
}

const FRAME_SECONDS = 0.02;

/**
 * The time (seconds, absolute) at the middle of the quietest `windowSeconds` of `samples`, which
 * start at `offsetSeconds`. Among windows about as quiet as the quietest (within 10%), the one
 * nearest `target` wins, so digital silence does not pull every cut to the window's edge.
 */
export function quietestTime(
  samples: Int16Array,
  sampleRate: number,
  offsetSeconds: number,
  target: number,
  windowSeconds = 0.3,
): number {
  const frame = Math.max(1, Math.round(sampleRate * FRAME_SECONDS));
  const frames = Math.floor(samples.length / frame);
  if (frames === 0) return target;
  const energy = new Float64Array(frames);
  for (let f = 0; f < frames; f++) {
    let sum = 0;
    for (let i = f * frame; i < (f + 1) * frame; i++) {
      const s = samples[i]!;
      sum += s * s;
    }
    energy[f] = sum / frame;
  }
  const width = Math.max(1, Math.min(frames, Math.round(windowSeconds / FRAME_SECONDS)));
  const windows = frames - width + 1;
  const sums = new Float64Array(windows);
  let run = 0;
  for (let f = 0; f < width; f++) run += energy[f]!;
  sums[0] = run;
  for (let f = 1; f < windows; f++) {
    run += energy[f + width - 1]! - energy[f - 1]!;
    sums[f] = run;
  }
  let min = Infinity;
  for (const s of sums) min = Math.min(min, s);
  const tolerance = min * 1.1 + width; // + width: a few units of noise count as equally silent
  let best = -1;
  let bestDistance = Infinity;
  for (let f = 0; f < windows; f++) {
    if (sums[f]! > tolerance) continue;
    const mid = offsetSeconds + (f + width / 2) * FRAME_SECONDS;
    const d = Math.abs(mid - target);
    if (d < bestDistance) {
      bestDistance = d;
      best = f;
    }
  }
  return offsetSeconds + (best + width / 2) * FRAME_SECONDS;
}
