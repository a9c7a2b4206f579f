import { Type } from 'typebox';
import { MediaTransformError } from '../media/index.js';
import { defineKind } from './define.js';
import { chosen, EngineOption, speechPlan } from './engines.js';
import { jsonOutput, speechDocument, transcribe } from './intelligence.js';

/** ISO 639-1, a hint for the provider (the local engine knows English only). */
export const LanguageOption = Type.Optional(Type.String({ pattern: '^[a-z]{2}$' }));

export const SpeechOptions = Type.Object(
  { engine: EngineOption, language: LanguageOption },
  { additionalProperties: false },
);

/** A file without sound cannot be transcribed: said at once, not retried. */
export function requireAudio(kind: string, hasAudio: boolean): void {
  if (!hasAudio)
    throw new MediaTransformError(
      'no_audio_stream',
      `${kind} needs sound, and this file has no audio stream (a video without a soundtrack)`,
    );
}

/**
 * speech: a transcript with segment and word times (intelligence JSON, reference 2.9), from
 * pocketsphinx on this machine or an OpenAI-compatible speech-to-text server. Long files are
 * cut into chunks at quiet moments, with progress. Silence gives `detected: false`.
 */
export const speechKind = defineKind({
  kind: 'speech',
  annotates: 'speech',
  options: SpeechOptions,
  needsInputFile: true,
  inputKinds: ['audio', 'video'],
  engines: (o, e) => speechPlan('speech', o.engine, e, o.language),
  check: (_o, input) => requireAudio('speech', input.probe.hasAudio),
  async run(ctx, input) {
    const engine = chosen(
      'speech',
      speechPlan('speech', ctx.options.engine, await ctx.ai.engines(), ctx.options.language),
    );
    const result = await transcribe(ctx, input, engine, ctx.progress, ctx.options.language);
    const doc = speechDocument(result, engine);
    return {
      files: [await jsonOutput(ctx, input, 'speech', doc, { engine, engines: doc.engines })],
      annotate: {
        key: 'speech',
        value: {
          detected: doc.detected,
          language: doc.language,
          speakers: doc.speakers,
          confidence: doc.confidence,
          words: result.words.length,
          engine,
        },
      },
    };
  },
});
