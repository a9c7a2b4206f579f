// prompt: the caller's own question about a file; the answer is `{answer}` text, or an object
// following the caller's JSON schema when one is given.
import type { EngineInfo } from '../engine.js';
import { schemaProblems, structuredOutput, type ChatMessage, type StructuredOutput } from '../provider/chat.js';
import { mediaParts, type MediaContext } from './context.js';

export interface PromptAnswer {
  answer: string;
}

export const PROMPT_OUTPUT = structuredOutput<PromptAnswer>('answer', {
  type: 'object',
  additionalProperties: false,
  required: ['answer'],
  properties: { answer: { type: 'string' } },
});

/**
 * The output spec for a prompt: the default `{answer}` or the caller's schema (not strict: a
 * caller's schema need not follow OpenAI's strict-mode rules). Check it first with
 * promptSchemaProblems; an unusable schema throws here.
 */
export function promptOutput(
  userSchema?: Record<string, unknown>,
): StructuredOutput<unknown> | StructuredOutput<PromptAnswer> {
  return userSchema ? structuredOutput<unknown>('answer', userSchema, false) : PROMPT_OUTPUT;
}

/** For option validation: problems with a caller's schema, empty when usable. */
export function promptSchemaProblems(schema: unknown): string[] {
  return schemaProblems(schema);
}

export function promptMessages(prompt: string, ctx: MediaContext): ChatMessage[] {
  return [
    {
      role: 'system',
      content:
        'You answer questions about a media file using only its images and transcript. Say so when they do not contain the answer.',
    },
    { role: 'user', content: mediaParts(ctx, `Question: ${prompt}`) },
  ];
}

export function promptIntelligence(prompt: string, answer: unknown, engine: EngineInfo) {
  return { object: 'intelligence' as const, kind: 'prompt' as const, prompt, answer, engine };
}
