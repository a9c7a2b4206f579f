import fs from 'node:fs/promises';
import path from 'node:path';
import { Type } from 'typebox';
import {
  applyChapterTitles,
  CHAPTER_TITLES_OUTPUT,
  chapterTitleMessages,
  chaptersJson,
  chaptersVtt,
  detectChapters,
  progressReporter,
  subProgress,
  titleCardTime,
  type ChapterForTitling,
  type DetectedChapter,
  type EngineStatus,
} from '../ai/index.js';
import { askChat, imagesOf } from './chat-context.js';
import { defineKind } from './define.js';
import { chatPlan, chosen, EngineOption, engineUse, helperSpeech, type EngineUse } from './engines.js';
import { helperSpeechOf } from './intelligence.js';

const Options = Type.Object(
  {
    format: Type.Optional(Type.Enum(['vtt', 'json'])),
    engine: EngineOption,
    /** Shortest chapter in seconds (default 10). */
    min_length: Type.Optional(Type.Number({ minimum: 1, maximum: 3600 })),
  },
  { additionalProperties: false },
);

/** Which local engines found the boundaries and titles (or were missing). */
function localUses(hasVideo: boolean, ocr: EngineStatus): EngineUse[] {
  if (!hasVideo) return [];
  const note = ocr.found ? undefined : `not used: ${ocr.message ?? 'not installed'}`;
  return [
    { role: 'scenes', name: 'ffmpeg-scdet', model: null, version: null },
    { role: 'titles', name: 'tesseract', model: ocr.model, version: ocr.version, ...(note ? { note } : {}) },
  ];
}

/**
 * chapters: a chapter track (WebVTT, or JSON `{chapters: [{index, start, end, title}]}`).
 * Boundaries are scene cuts merged with pauses in speech, no chapter shorter than `min_length`;
 * titles come from the chat model when configured (transcript excerpts and a frame per chapter),
 * else from title cards read by OCR, else the chapter's first words, else "Chapter N".
 */
export const chaptersKind = defineKind({
  kind: 'chapters',
  options: Options,
  needsInputFile: true,
  inputKinds: ['video', 'audio'],
  engines: (o, e) => chatPlan('chapters', o.engine, e, null),
  async run(ctx, input) {
    const o = ctx.options;
    const e = await ctx.ai.engines();
    const engine = chosen('chapters', chatPlan('chapters', o.engine, e, null));
    const progress = progressReporter(ctx.progress);
    const speech = await helperSpeechOf(ctx, input, helperSpeech(o.engine, e), subProgress(progress, 0, 0.5));
    const found = await detectChapters(input.path, {
      workDir: ctx.workDir,
      probe: input.probe,
      ...(speech.result ? { speech: speech.result } : {}),
      ...(o.min_length !== undefined ? { minChapterSeconds: o.min_length } : {}),
      ocr: e.local.ocr.found,
      signal: ctx.signal,
      onProgress: subProgress(progress, 0.5, 0.85),
    });
    const uses = [...speech.uses, ...localUses(input.probe.hasVideo, e.local.ocr)];
    let chapters: DetectedChapter[] = found.chapters;
    if (engine === 'provider' && chapters.length > 0) {
      const frames = input.probe.hasVideo ? await imagesOf(ctx, input, chapters.map(titleCardTime)) : [];
      const words = speech.result?.words ?? [];
      const forTitling: ChapterForTitling[] = chapters.map((c, i) => ({
        ...c,
        transcript: words
          .filter((w) => w.start >= c.start && w.start < c.end)
          .map((w) => w.text)
          .join(' '),
        ...(frames[i] ? { image: frames[i].url } : {}),
      }));
      const answer = await askChat(ctx, 'chapters', chapterTitleMessages(forTitling), CHAPTER_TITLES_OUTPUT);
      chapters = applyChapterTitles(chapters, answer.value);
      uses.push(engineUse('titles', answer.engine));
    }
    const format = o.format ?? 'vtt';
    const about = { engine, engines: uses };
    const file = path.join(ctx.workDir, `chapters.${format}`);
    await fs.writeFile(
      file,
      format === 'vtt'
        ? chaptersVtt(chapters)
        : `${JSON.stringify({ ...chaptersJson(chapters), ...about }, null, 2)}\n`,
    );
    progress.done();
    return {
      files: [
        {
          path: file,
          kind: 'chapters',
          format,
          extension: format,
          mime: format === 'vtt' ? 'text/vtt' : 'application/json',
          ...(input.probe.duration ? { duration: input.probe.duration } : {}),
          ref: ctx.target.ref ?? 'chapters',
          metadata: { source_file_id: input.file.id, chapters: chapters.length, ...about },
        },
      ],
      results: { chapters: chapters.length, ...about },
    };
  },
});
