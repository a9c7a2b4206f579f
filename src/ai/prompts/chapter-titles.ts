// Chapter titles from a language model: each chapter's transcript and first frame in, one short
// title per chapter index out. Chapters the model skips keep their local title.
import { structuredOutput, type ChatMessage, type ContentPart } from '../provider/chat.js';
import type { Chapter } from '../chapters/format.js';
import { formatTimestamp } from '../subtitles/format.js';

export interface ChapterTitlesAnswer {
  titles: { index: number; title: string }[];
}

export const CHAPTER_TITLES_OUTPUT = structuredOutput<ChapterTitlesAnswer>('chapter_titles', {
  type: 'object',
  additionalProperties: false,
  required: ['titles'],
  properties: {
    titles: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['index', 'title'],
        properties: { index: { type: 'integer' }, title: { type: 'string' } },
      },
    },
  },
});

export interface ChapterForTitling extends Chapter {
  transcript?: string;
  /** A data URL of a frame near the chapter's start. */
  image?: string;
}

export function chapterTitleMessages(chapters: readonly ChapterForTitling[]): ChatMessage[] {
  const parts: ContentPart[] = [
    { type: 'text', text: 'Give each chapter a short title (at most 8 words) that says what it is about.' },
  ];
  for (const c of chapters) {
    const when = `${formatTimestamp(c.start, 'vtt')}–${formatTimestamp(c.end, 'vtt')}`;
    parts.push({
      type: 'text',
      text: `Chapter index ${c.index} (${when}), current title ${JSON.stringify(c.title)}.${c.transcript ? ` Transcript: ${c.transcript.slice(0, 2000)}` : ''}`,
    });
    if (c.image) parts.push({ type: 'image_url', image_url: { url: c.image } });
  }
  return [
    {
      role: 'system',
      content:
        'You title chapters of videos and recordings. Keep titles factual and short; keep a current title when it already fits.',
    },
    { role: 'user', content: parts },
  ];
}

export function applyChapterTitles<C extends Chapter>(chapters: readonly C[], answer: ChapterTitlesAnswer): C[] {
  const byIndex = new Map(answer.titles.map((t) => [t.index, t.title.trim()]));
  return chapters.map((c) => {
    const title = byIndex.get(c.index);
    return title ? { ...c, title: title.slice(0, 80) } : c;
  });
}
