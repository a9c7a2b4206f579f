// description: a title, a paragraph and tags for a file (SEO and accessibility).
import type { EngineInfo } from '../engine.js';
import { structuredOutput, type ChatMessage } from '../provider/chat.js';
import { mediaParts, type MediaContext } from './context.js';

export interface DescriptionAnswer {
  title: string;
  description: string;
  tags: string[];
}

export const DESCRIPTION_OUTPUT = structuredOutput<DescriptionAnswer>('description', {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'description', 'tags'],
  properties: {
    title: { type: 'string', description: 'A short, specific title (at most 80 characters).' },
    description: {
      type: 'string',
      description: 'One paragraph describing what is seen and heard, useful as alt text and for search.',
    },
    tags: { type: 'array', items: { type: 'string' }, description: '3 to 10 lowercase keywords.' },
  },
});

export function descriptionMessages(ctx: MediaContext): ChatMessage[] {
  return [
    {
      role: 'system',
      content:
        'You describe media files for search and accessibility. Describe only what the images and the transcript show; do not guess names of people. Answer in the language of the speech when there is speech, otherwise in English.',
    },
    { role: 'user', content: mediaParts(ctx, 'Give this file a title, a one-paragraph description and 3 to 10 tags.') },
  ];
}

export function descriptionIntelligence(answer: DescriptionAnswer, engine: EngineInfo) {
  const tags = [...new Set(answer.tags.map((t) => t.trim().toLowerCase()).filter(Boolean))].slice(0, 20);
  return {
    object: 'intelligence' as const,
    kind: 'description' as const,
    title: answer.title.trim(),
    description: answer.description.trim(),
    tags,
    engine,
  };
}
