// Chapter titles without a language model: text read from a title card when the OCR is
// confident, else the first words spoken in the chapter, else "Chapter N".

export interface OcrLineLike {
  text: string;
  confidence: number;
}

export type TitleSource = 'ocr' | 'speech' | 'default';

const MAX_TITLE = 60;

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function clip(text: string, max = MAX_TITLE): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trim()}…`;
}

/**
 * Title-card text: lines read with at least `minConfidence` (0–1) that look like words (3+ letters
 * in all), top to bottom. Busy frames give low-confidence fragments and yield null.
 */
export function titleFromOcr(lines: readonly OcrLineLike[], minConfidence = 0.8): string | null {
  const good = lines
    .filter((l) => l.confidence >= minConfidence)
    .map((l) =>
      l.text
        .split(/\s+/)
        .filter((w) => /[\p{L}\p{N}]/u.test(w))
        .join(' '),
    )
    .filter(Boolean);
  const text = good.join(' ').replace(/\s+/g, ' ').trim();
  return (text.match(/\p{L}/gu)?.length ?? 0) >= 3 ? clip(text) : null;
}

/** The first `maxWords` words of the chapter's speech. */
export function titleFromSpeech(words: readonly { text: string }[], maxWords = 6): string | null {
  const picked = words.map((w) => w.text.trim()).filter(Boolean);
  if (picked.length === 0) return null;
  const text = picked
    .slice(0, maxWords)
    .join(' ')
    .replace(/[,;:]$/, '');
  return clip(capitalise(text) + (picked.length > maxWords ? '…' : ''));
}

export function chapterTitle(
  index: number,
  ocr: string | null,
  speech: string | null,
): { title: string; source: TitleSource } {
  if (ocr) return { title: ocr, source: 'ocr' };
  if (speech) return { title: speech, source: 'speech' };
  return { title: `Chapter ${index + 1}`, source: 'default' };
}
