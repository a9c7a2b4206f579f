import { Type } from 'typebox';
import {
  evenTimes,
  progressReporter,
  promptIntelligence,
  promptMessages,
  promptOutput,
  promptSchemaProblems,
  subProgress,
  PROMPT_OUTPUT,
} from '../ai/index.js';
import { askChat, imagesOf, mediaContext } from './chat-context.js';
import { defineKind } from './define.js';
import { chatPlan, chosen, EngineOption, engineUse, helperSpeech } from './engines.js';
import { helperSpeechOf, jsonOutput } from './intelligence.js';

const Options = Type.Object(
  {
    prompt: Type.String({ minLength: 1, maxLength: 4000 }),
    /** A JSON Schema (type object) the answer must follow; without it the answer is text. */
    schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    engine: EngineOption,
  },
  { additionalProperties: false },
);

const NO_LOCAL = 'no local engine answers free-form questions about media';
const FRAMES = 4;

/**
 * prompt: the caller's question about a file, answered by the chat model from the image (or
 * frames of a video) and the transcript: `{prompt, answer}`, the answer following `schema` when
 * one is given. Needs the chat model: without one it is refused at creation.
 */
export const promptKind = defineKind({
  kind: 'prompt',
  annotates: 'prompt',
  options: Options,
  needsInputFile: true,
  inputKinds: ['image', 'video', 'audio'],
  problems: (o) =>
    o.schema === undefined ? [] : promptSchemaProblems(o.schema).map((message) => ({ field: 'schema', message })),
  engines: (o, e) => chatPlan('prompt', o.engine, e, NO_LOCAL),
  async run(ctx, input) {
    const o = ctx.options;
    const e = await ctx.ai.engines();
    const engine = chosen('prompt', chatPlan('prompt', o.engine, e, NO_LOCAL));
    const progress = progressReporter(ctx.progress);
    const speech = await helperSpeechOf(ctx, input, helperSpeech(o.engine, e), subProgress(progress, 0, 0.6));
    const times = input.probe.kind === 'video' ? evenTimes(input.probe.duration ?? 0, FRAMES) : undefined;
    const messages = promptMessages(o.prompt, mediaContext(input, await imagesOf(ctx, input, times), speech.result));
    progress.report(0.7);
    let answer: unknown;
    let info;
    if (o.schema) {
      const got = await askChat(ctx, 'prompt', messages, promptOutput(o.schema));
      [answer, info] = [got.value, got.engine];
    } else {
      const got = await askChat(ctx, 'prompt', messages, PROMPT_OUTPUT);
      [answer, info] = [got.value.answer, got.engine];
    }
    const { engine: _info, ...doc } = promptIntelligence(o.prompt, answer, info);
    const engines = [...speech.uses, engineUse('answer', info)];
    progress.done();
    // Small answers go into the media's metadata too, so conditions can test them (metadata.prompt.answer…).
    const small = JSON.stringify(answer).length <= 4096;
    return {
      files: [await jsonOutput(ctx, input, 'prompt', { ...doc, engine, engines }, { engine, engines })],
      annotate: { key: 'prompt', value: { prompt: o.prompt, ...(small ? { answer } : {}), engine } },
    };
  },
});
