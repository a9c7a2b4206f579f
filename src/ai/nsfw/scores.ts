// From nsfwjs's five classes to the scores mediad reports (pure).
//
// nsfwjs classes (probabilities summing to 1): Drawing (safe illustration), Hentai (explicit
// drawn content), Neutral (safe photo), Porn (explicit photo), Sexy (suggestive, no explicit
// nudity). Mapping:
//   nudity = Porn + Hentai          explicit content, photographed or drawn, shows nudity
//   sexual = Porn + Hentai + Sexy   explicit or suggestive sexual content
// Both stay in 0–1 and sexual >= nudity. The model has no class for violence or gore, so the
// local engine does not report those scores at all (absent, not zero).

export interface NsfwClasses {
  drawing: number;
  hentai: number;
  neutral: number;
  porn: number;
  sexy: number;
}

/** nsfwjs's NSFW_CLASSES order: the model's output index → our key. */
export const CLASS_ORDER = ['drawing', 'hentai', 'neutral', 'porn', 'sexy'] as const;

export interface NsfwScores {
  nudity: number;
  sexual: number;
}

const clamp01 = (v: number) => Math.min(1, Math.max(0, v));

export function classesFromOutput(values: ArrayLike<number>): NsfwClasses {
  if (values.length !== CLASS_ORDER.length)
    throw new Error(`the NSFW model gave ${values.length} outputs, expected ${CLASS_ORDER.length}`);
  const [drawing, hentai, neutral, porn, sexy] = CLASS_ORDER.map((_, i) => clamp01(Number(values[i])));
  return { drawing: drawing!, hentai: hentai!, neutral: neutral!, porn: porn!, sexy: sexy! };
}

export function scoresFromClasses(c: NsfwClasses): NsfwScores {
  return { nudity: clamp01(c.porn + c.hentai), sexual: clamp01(c.porn + c.hentai + c.sexy) };
}

/**
 * `detected` when either score reaches the threshold. `confidence` is how sure the verdict is:
 * the highest score when detected, one minus it when not.
 */
export function verdict(s: NsfwScores, threshold: number): { detected: boolean; confidence: number } {
  const top = Math.max(s.nudity, s.sexual);
  const detected = top >= threshold;
  return { detected, confidence: detected ? top : 1 - top };
}

export interface FrameScores extends NsfwScores {
  time: number;
}

export interface FlaggedSpan extends NsfwScores {
  start: number;
  end: number;
  /** Which scores passed the threshold in the span. */
  categories: ('nudity' | 'sexual')[];
}

/** Runs of consecutive flagged frames; each frame stands for half an interval either side. */
export function flaggedSpans(
  frames: readonly FrameScores[],
  interval: number,
  threshold: number,
  duration: number,
): FlaggedSpan[] {
  const spans: FlaggedSpan[] = [];
  let open: FlaggedSpan | null = null;
  for (const f of frames) {
    if (!verdict(f, threshold).detected) {
      open = null;
      continue;
    }
    const start = Math.max(0, f.time - interval / 2);
    const end = Math.min(duration, f.time + interval / 2);
    if (open) {
      open.end = end;
      open.nudity = Math.max(open.nudity, f.nudity);
      open.sexual = Math.max(open.sexual, f.sexual);
    } else {
      open = { start, end, nudity: f.nudity, sexual: f.sexual, categories: [] };
      spans.push(open);
    }
  }
  for (const s of spans)
    s.categories = [
      ...(s.nudity >= threshold ? ['nudity' as const] : []),
      ...(s.sexual >= threshold ? ['sexual' as const] : []),
    ];
  return spans;
}
