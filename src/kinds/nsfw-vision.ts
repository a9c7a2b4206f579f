import { formatTimestamp, structuredOutput, type ChatMessage, type ContentPart, type FrameImage } from '../ai/index.js';

// NSFW scores from a vision chat model: all four categories (the local model knows nudity and
// sexual content only), per frame, in one structured answer per batch of frames.

export const CATEGORIES = ['nudity', 'sexual', 'violence', 'gore'] as const;
export type Category = (typeof CATEGORIES)[number];
export type Scores = Record<Category, number>;

export interface FrameAnswer extends Scores {
  index: number;
}

const score = { type: 'number', description: 'From 0 (none) to 1 (certainly, explicitly).' };

export const NSFW_OUTPUT = structuredOutput<{ frames: FrameAnswer[] }>('nsfw_scores', {
  type: 'object',
  additionalProperties: false,
  required: ['frames'],
  properties: {
    frames: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['index', ...CATEGORIES],
        properties: { index: { type: 'integer' }, nudity: score, sexual: score, violence: score, gore: score },
      },
    },
  },
});

export function nsfwMessages(frames: readonly FrameImage[], firstIndex: number): ChatMessage[] {
  const parts: ContentPart[] = [
    {
      type: 'text',
      text: 'Score each image from 0 to 1 for: nudity (exposed genitals, breasts or buttocks), sexual (sexual acts or sexually suggestive content), violence (fighting, weapons used on people, injury), gore (blood, wounds, mutilation). Answer one entry per image, with its index.',
    },
  ];
  frames.forEach((f, i) => {
    const at = f.time !== undefined ? ` (at ${formatTimestamp(f.time, 'vtt')})` : '';
    parts.push({ type: 'text', text: `Image index ${firstIndex + i}${at}:` });
    parts.push({ type: 'image_url', image_url: { url: f.url } });
  });
  return [
    {
      role: 'system',
      content:
        'You are a content moderation classifier. Judge only what is visible; answer with scores, never with descriptions.',
    },
    { role: 'user', content: parts },
  ];
}

const clamp01 = (v: number) => (Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 0);

/** The answer's scores for each asked frame (a frame the model skipped scores 0 and is listed as missing). */
export function frameScores(answer: readonly FrameAnswer[], count: number, firstIndex: number): Scores[] {
  const byIndex = new Map(answer.map((a) => [a.index, a]));
  return Array.from({ length: count }, (_, i) => {
    const a = byIndex.get(firstIndex + i);
    return {
      nudity: clamp01(a?.nudity ?? 0),
      sexual: clamp01(a?.sexual ?? 0),
      violence: clamp01(a?.violence ?? 0),
      gore: clamp01(a?.gore ?? 0),
    };
  });
}

export interface VisionSpan extends Scores {
  start: number;
  end: number;
  categories: Category[];
}

/** Runs of consecutive flagged frames; each frame stands for half an interval either side. */
export function visionSpans(
  frames: readonly (Scores & { time: number })[],
  interval: number,
  threshold: number,
  duration: number,
): VisionSpan[] {
  const spans: VisionSpan[] = [];
  let open: VisionSpan | null = null;
  for (const f of frames) {
    if (!CATEGORIES.some((c) => f[c] >= threshold)) {
      open = null;
      continue;
    }
    const start = Math.max(0, f.time - interval / 2);
    const end = Math.min(duration, f.time + interval / 2);
    if (!open) {
      open = { start, end, nudity: 0, sexual: 0, violence: 0, gore: 0, categories: [] };
      spans.push(open);
    }
    open.end = end;
    for (const c of CATEGORIES) open[c] = Math.max(open[c], f[c]);
  }
  for (const s of spans) s.categories = CATEGORIES.filter((c) => s[c] >= threshold);
  return spans;
}
