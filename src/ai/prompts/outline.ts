// outline: the sections of an audio or video file with titles and times (reference 2.11).
import type { EngineInfo } from '../engine.js';
import { structuredOutput, type ChatMessage } from '../provider/chat.js';
import { ms3 } from '../speech/types.js';
import { mediaParts, type MediaContext } from './context.js';

export interface OutlineEntry {
  title: string;
  start: number;
  end: number;
}

export interface OutlineAnswer {
  timeline: OutlineEntry[];
}

export const OUTLINE_OUTPUT = structuredOutput<OutlineAnswer>('outline', {
  type: 'object',
  additionalProperties: false,
  required: ['timeline'],
  properties: {
    timeline: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['title', 'start', 'end'],
        properties: {
          title: { type: 'string' },
          start: { type: 'number', description: 'Seconds from the start.' },
          end: { type: 'number', description: 'Seconds from the start.' },
        },
      },
    },
  },
});

export function outlineMessages(ctx: MediaContext): ChatMessage[] {
  return [
    {
      role: 'system',
      content:
        'You outline recordings. Split the file into its main sections in order, each with a short title and its start and end in seconds. Sections cover the whole file without overlapping.',
    },
    { role: 'user', content: mediaParts(ctx, 'Outline this file.') },
  ];
}

/** Sorted, inside [0, duration], without overlaps or empty entries: models get times wrong. */
export function normalizeOutline(answer: OutlineAnswer, duration: number): OutlineEntry[] {
  const limit = duration > 0 ? duration : Infinity;
  const sorted = answer.timeline
    .map((e) => ({
      title: e.title.trim(),
      start: Math.max(0, Math.min(e.start, limit)),
      end: Math.max(0, Math.min(e.end, limit)),
    }))
    .filter((e) => e.title && Number.isFinite(e.start) && Number.isFinite(e.end))
    .sort((a, b) => a.start - b.start);
  const out: OutlineEntry[] = [];
  for (const e of sorted) {
    const prev = out[out.length - 1];
    const start = prev ? Math.max(e.start, prev.end) : e.start;
    if (e.end > start) out.push({ title: e.title, start: ms3(start), end: ms3(e.end) });
  }
  return out;
}

export function outlineIntelligence(timeline: OutlineEntry[], engine: EngineInfo) {
  return { object: 'intelligence' as const, kind: 'outline' as const, timeline, engine };
}
