// Subtitle cues from word times, following common captioning guidance (BBC, Netflix): at most
// two lines of ~42 characters, 1–7 s on screen, a new cue at each pause so text never lingers
// over silence, and breaks preferred after sentence ends.

export interface TimedWord {
  text: string;
  start: number;
  end: number;
}

export interface Cue {
  start: number;
  end: number;
  lines: string[];
}

export interface CueOptions {
  maxLineLength?: number;
  maxLines?: number;
  /** Seconds a cue stays at least (extended into the following silence when there is room). */
  minDuration?: number;
  maxDuration?: number;
  /** A silence this long (seconds) starts a new cue. */
  pauseSeconds?: number;
  /** Length of the media: no cue ends after it. */
  mediaDuration?: number;
}

export const CUE_DEFAULTS = {
  maxLineLength: 42,
  maxLines: 2,
  minDuration: 1,
  maxDuration: 7,
  pauseSeconds: 0.7,
} as const;

const SENTENCE_END = /[.!?…]["')\]]*$/;

/** Words longer than a line are cut into line-sized pieces (URLs, long compounds). */
function pieces(text: string, max: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += max) out.push(text.slice(i, i + max));
  return out.length > 0 ? out : [''];
}

/**
 * Wraps words into at most `maxLines` lines of `maxLength`, as balanced as possible (a short
 * second line under a long first one reads badly); null when they do not fit.
 */
export function wrapLines(words: readonly string[], maxLength: number, maxLines: number): string[] | null {
  const text = words.join(' ');
  if (text.length <= maxLength) return [text];
  if (maxLines < 2) return null;
  let best: string[] | null = null;
  let bestScore = Infinity;
  for (let i = 1; i < words.length; i++) {
    const first = words.slice(0, i).join(' ');
    if (first.length > maxLength) break;
    const rest = wrapLines(words.slice(i), maxLength, maxLines - 1);
    if (!rest) continue;
    const lengths = [first.length, ...rest.map((l) => l.length)];
    // Balance first; a small bonus for breaking after punctuation.
    const score = Math.max(...lengths) - Math.min(...lengths) - (/[,.;:!?]$/.test(first) ? 6 : 0);
    if (score < bestScore) {
      bestScore = score;
      best = [first, ...rest];
    }
  }
  return best;
}

export function cuesFromWords(words: readonly TimedWord[], options: CueOptions = {}): Cue[] {
  const o = { ...CUE_DEFAULTS, ...options };
  const tokens = words
    .filter((w) => w.text.trim() && Number.isFinite(w.start) && Number.isFinite(w.end))
    .flatMap((w) =>
      pieces(w.text.trim().replace(/\s+/g, ' '), o.maxLineLength).map((text) => ({
        text,
        start: w.start,
        end: Math.max(w.start, w.end),
      })),
    );
  const groups: (typeof tokens)[] = [];
  let current: typeof tokens = [];
  for (const w of tokens) {
    const prev = current[current.length - 1];
    const first = current[0];
    if (prev && first) {
      const textLength = current.map((c) => c.text).join(' ').length;
      const breakHere =
        w.start - prev.end >= o.pauseSeconds ||
        w.end - first.start > o.maxDuration ||
        !wrapLines(
          [...current, w].map((c) => c.text),
          o.maxLineLength,
          o.maxLines,
        ) ||
        (SENTENCE_END.test(prev.text) && textLength >= o.maxLineLength / 2);
      if (breakHere) {
        groups.push(current);
        current = [];
      }
    }
    current.push(w);
  }
  if (current.length > 0) groups.push(current);

  const cues: Cue[] = groups.map((g) => ({
    start: g[0]!.start,
    end: g[g.length - 1]!.end,
    lines: wrapLines(
      g.map((c) => c.text),
      o.maxLineLength,
      o.maxLines,
    ) ?? [g.map((c) => c.text).join(' ')],
  }));
  const limit = o.mediaDuration ?? Infinity;
  for (let i = 0; i < cues.length; i++) {
    const cue = cues[i]!;
    const nextStart = cues[i + 1]?.start ?? limit;
    cue.start = Math.max(0, Math.min(cue.start, limit));
    // Extend short cues into the silence after them, never over the next cue or the media's end.
    cue.end = Math.min(Math.max(cue.end, cue.start + o.minDuration), cue.start + o.maxDuration, nextStart, limit);
    if (cue.end <= cue.start) cue.end = Math.min(cue.start + 0.001, limit);
  }
  return cues.filter((c) => c.end > c.start);
}
