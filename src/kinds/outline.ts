import { Type } from 'typebox';
import {
  chaptersJson,
  detectChapters,
  normalizeOutline,
  OUTLINE_OUTPUT,
  outlineMessages,
  progressReporter,
  subProgress,
} from '../ai/index.js';
import { askChat, imagesOf, mediaContext } from './chat-context.js';
import { defineKind } from './define.js';
import { chatPlan, chosen, EngineOption, engineUse, helperSpeech, type EngineUse } from './engines.js';
import { helperSpeechOf, jsonOutput } from './intelligence.js';

/**
 * outline: the sections of an audio or video file, `{timeline: [{title, start, end}]}`
 * (intelligence JSON, reference 2.11). With the chat model: from the transcript and frames.
 * Locally: the chapter boundaries (scene cuts, pauses in speech) with their title cards or first words.
 */
export const outlineKind = defineKind({
  kind: 'outline',
  options: Type.Object({ engine: EngineOption }, { additionalProperties: false }),
  needsInputFile: true,
  inputKinds: ['video', 'audio'],
  engines: (o, e) => chatPlan('outline', o.engine, e, null),
  async run(ctx, input) {
    const e = await ctx.ai.engines();
    const engine = chosen('outline', chatPlan('outline', ctx.options.engine, e, null));
    const progress = progressReporter(ctx.progress);
    const speech = await helperSpeechOf(ctx, input, helperSpeech(ctx.options.engine, e), subProgress(progress, 0, 0.5));
    const duration = input.probe.duration ?? speech.result?.duration ?? 0;
    let timeline;
    const uses: EngineUse[] = [...speech.uses];
    if (engine === 'provider') {
      const images = await imagesOf(ctx, input);
      progress.report(0.7);
      const answer = await askChat(
        ctx,
        'outline',
        outlineMessages(mediaContext(input, images, speech.result)),
        OUTLINE_OUTPUT,
      );
      timeline = normalizeOutline(answer.value, duration);
      uses.push(engineUse('outline', answer.engine));
    } else {
      const found = await detectChapters(input.path, {
        workDir: ctx.workDir,
        probe: input.probe,
        ...(speech.result ? { speech: speech.result } : {}),
        ocr: e.local.ocr.found,
        signal: ctx.signal,
        onProgress: subProgress(progress, 0.5, 0.95),
      });
      timeline = chaptersJson(found.chapters).chapters.map(({ title, start, end }) => ({ title, start, end }));
      if (input.probe.hasVideo) uses.push({ role: 'sections', name: 'ffmpeg-scdet', model: null, version: null });
      if (input.probe.hasVideo && e.local.ocr.found)
        uses.push({ role: 'titles', name: 'tesseract', model: e.local.ocr.model, version: e.local.ocr.version });
    }
    const doc = { object: 'intelligence' as const, kind: 'outline' as const, timeline, engine, engines: uses };
    progress.done();
    return { files: [await jsonOutput(ctx, input, 'outline', doc, { engine, engines: uses })] };
  },
});
