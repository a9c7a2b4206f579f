// Chapter boundaries (pure): scene cuts, moved into a nearby pause when they fall mid-sentence,
// plus long pauses in speech where no cut is near; then no chapter shorter than the minimum.

export interface TimeSpan {
  start: number;
  end: number;
}

export interface ChapterSpan extends TimeSpan {
  index: number;
}

export interface ChapterPlanInput {
  duration: number;
  cuts: readonly { time: number; score: number }[];
  /** Silences between words (see speechPauses); empty or absent without speech. */
  pauses?: readonly TimeSpan[];
  /** Shortest chapter in seconds (default 10). */
  minChapterSeconds?: number;
  /** A cut inside speech moves to the middle of a pause at most this far away (default 1.5 s). */
  snapSeconds?: number;
  /** A pause at least this long starts a chapter even without a scene cut (default 2 s). */
  pauseChapterSeconds?: number;
}

/** Gaps of at least `minSeconds` between consecutive words (and before the first / after the last). */
export function speechPauses(words: readonly TimeSpan[], duration: number, minSeconds = 0.3): TimeSpan[] {
  const out: TimeSpan[] = [];
  let prevEnd = 0;
  for (const w of words) {
    if (w.start - prevEnd >= minSeconds) out.push({ start: prevEnd, end: w.start });
    prevEnd = Math.max(prevEnd, w.end);
  }
  if (duration - prevEnd >= minSeconds) out.push({ start: prevEnd, end: duration });
  return out;
}

function snap(time: number, pauses: readonly TimeSpan[], within: number): number {
  if (pauses.length === 0 || pauses.some((p) => time >= p.start && time <= p.end)) return time;
  let best = time;
  let bestDistance = within;
  for (const p of pauses) {
    const mid = (p.start + p.end) / 2;
    const d = Math.abs(mid - time);
    if (d <= bestDistance) {
      bestDistance = d;
      best = mid;
    }
  }
  return best;
}

/**
 * Candidates in time order; a candidate closer than the minimum to the last kept boundary is
 * merged into it (the earlier one wins, so a title card stays with the chapter it opens).
 */
export function planChapters(input: ChapterPlanInput): ChapterSpan[] {
  const duration = Math.max(0, input.duration);
  const min = input.minChapterSeconds ?? 10;
  const within = input.snapSeconds ?? 1.5;
  const pauses = input.pauses ?? [];
  const fromCuts = input.cuts.map((c) => snap(c.time, pauses, within));
  const fromPauses = pauses
    .filter((p) => p.end - p.start >= (input.pauseChapterSeconds ?? 2) && p.start > 0 && p.end < duration)
    .map((p) => (p.start + p.end) / 2)
    .filter((t) => fromCuts.every((c) => Math.abs(c - t) > within));
  const candidates = [...fromCuts, ...fromPauses].filter((t) => t > 0 && t < duration).sort((a, b) => a - b);
  const bounds = [0];
  for (const t of candidates) {
    if (t - bounds[bounds.length - 1]! >= min && duration - t >= min) bounds.push(t);
  }
  bounds.push(duration);
  return bounds.slice(0, -1).map((start, index) => ({ index, start, end: bounds[index + 1]! }));
}
