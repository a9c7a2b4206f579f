// Groups words into segments (the `text`/`timeline` entries of the speech output) where the
// speaker pauses, so a segment reads as a phrase; long runs are split so none grows unwieldy.
import { meanConfidence, type SpeechSegment, type SpeechWord } from './types.js';

export interface SegmentOptions {
  /** A silence at least this long ends a segment (seconds, default 0.5). */
  pauseSeconds?: number;
  /** Longest segment (seconds, default 15): past it the segment ends at the next word boundary. */
  maxSeconds?: number;
}

export function segmentFromWords(words: SpeechWord[], text?: string): SpeechSegment {
  const first = words[0];
  const last = words[words.length - 1];
  const speakers = new Set(words.map((w) => w.speaker));
  const seg: SpeechSegment = {
    start: first?.start ?? 0,
    end: last?.end ?? 0,
    text: text ?? words.map((w) => w.text).join(' '),
    confidence: meanConfidence(words.map((w) => w.confidence)),
    words,
  };
  const only = speakers.size === 1 ? [...speakers][0] : undefined;
  if (only !== undefined) seg.speaker = only;
  return seg;
}

export function groupWords(words: readonly SpeechWord[], opts: SegmentOptions = {}): SpeechSegment[] {
  const pause = opts.pauseSeconds ?? 0.5;
  const maxSeconds = opts.maxSeconds ?? 15;
  const out: SpeechSegment[] = [];
  let current: SpeechWord[] = [];
  for (const w of words) {
    const prev = current[current.length - 1];
    const first = current[0];
    const split =
      prev !== undefined &&
      first !== undefined &&
      (w.start - prev.end >= pause || w.end - first.start > maxSeconds || w.speaker !== prev.speaker);
    if (split) {
      out.push(segmentFromWords(current));
      current = [];
    }
    current.push(w);
  }
  if (current.length > 0) out.push(segmentFromWords(current));
  return out;
}
