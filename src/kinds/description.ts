import { Type } from 'typebox';
import {
  DESCRIPTION_OUTPUT,
  descriptionIntelligence,
  descriptionMessages,
  progressReporter,
  subProgress,
} from '../ai/index.js';
import { askChat, imagesOf, mediaContext, sceneMiddles } from './chat-context.js';
import { localDescription } from './description-local.js';
import { defineKind } from './define.js';
import { chatPlan, chosen, EngineOption, engineUse, helperSpeech } from './engines.js';
import { helperSpeechOf, jsonOutput } from './intelligence.js';

/**
 * description: `{title, description, tags}` for an image or a video (intelligence JSON). With the
 * chat model: a real description from the image, or frames at the video's scene changes, and the
 * transcript. Without one: an honest summary of what the local engines see (media facts, on-screen
 * text, the NSFW classifier's class, how the speech begins), marked `engine: "local"`.
 */
export const descriptionKind = defineKind({
  kind: 'description',
  annotates: 'description',
  options: Type.Object({ engine: EngineOption }, { additionalProperties: false }),
  needsInputFile: true,
  inputKinds: ['image', 'video'],
  engines: (o, e) => chatPlan('description', o.engine, e, null),
  async run(ctx, input) {
    const e = await ctx.ai.engines();
    const engine = chosen('description', chatPlan('description', ctx.options.engine, e, null));
    const progress = progressReporter(ctx.progress);
    const speech = await helperSpeechOf(ctx, input, helperSpeech(ctx.options.engine, e), subProgress(progress, 0, 0.5));
    let doc;
    if (engine === 'provider') {
      const times = input.probe.kind === 'video' ? await sceneMiddles(ctx, input) : undefined;
      const images = await imagesOf(ctx, input, times);
      progress.report(0.7);
      const answer = await askChat(
        ctx,
        'description',
        descriptionMessages(mediaContext(input, images, speech.result)),
        DESCRIPTION_OUTPUT,
      );
      const { engine: info, ...described } = descriptionIntelligence(answer.value, answer.engine);
      doc = { ...described, engine, engines: [...speech.uses, engineUse('description', info)] };
    } else {
      const { uses, ...described } = await localDescription(ctx, input, e, speech.result);
      doc = {
        object: 'intelligence' as const,
        kind: 'description' as const,
        ...described,
        engine,
        engines: [...speech.uses, ...uses],
      };
    }
    progress.done();
    return {
      files: [await jsonOutput(ctx, input, 'description', doc, { engine, engines: doc.engines })],
      annotate: { key: 'description', value: { title: doc.title, tags: doc.tags, engine } },
    };
  },
});
