import fs from 'node:fs/promises';
import path from 'node:path';
import { Type } from 'typebox';
import { cuesFromWords, SUBTITLE_MIME, writeSubtitles } from '../ai/index.js';
import { defineKind } from './define.js';
import { chosen, EngineOption, speechPlan } from './engines.js';
import { speechOf } from './intelligence.js';
import { LanguageOption, requireAudio } from './speech.js';

const Options = Type.Object(
  { format: Type.Optional(Type.Enum(['vtt', 'srt'])), engine: EngineOption, language: LanguageOption },
  { additionalProperties: false },
);

/**
 * subtitles: a caption track (WebVTT, or SubRip) from word times: at most two lines of 42
 * characters, 1–7 s on screen, a new cue at each pause. An earlier speech output of the same file
 * (made by the same engine) is read back instead of transcribing twice.
 */
export const subtitlesKind = defineKind({
  kind: 'subtitles',
  options: Options,
  needsInputFile: true,
  inputKinds: ['audio', 'video'],
  engines: (o, e) => speechPlan('subtitles', o.engine, e, o.language),
  check: (_o, input) => requireAudio('subtitles', input.probe.hasAudio),
  async run(ctx, input) {
    const o = ctx.options;
    const engine = chosen('subtitles', speechPlan('subtitles', o.engine, await ctx.ai.engines(), o.language));
    const format = o.format ?? 'vtt';
    const speech = await speechOf(ctx, input, engine, (p) => ctx.progress(p * 0.95), o.language);
    const mediaDuration = input.probe.duration ?? speech.result.duration;
    const cues = cuesFromWords(speech.result.words, { mediaDuration });
    const file = path.join(ctx.workDir, `subtitles.${format}`);
    await fs.writeFile(file, writeSubtitles(cues, format));
    const about = {
      language: speech.result.language,
      cues: cues.length,
      engine,
      engines: [speech.use],
    };
    return {
      files: [
        {
          path: file,
          kind: 'subtitles',
          format,
          extension: format,
          mime: SUBTITLE_MIME[format],
          duration: mediaDuration,
          ref: ctx.target.ref ?? 'subtitles',
          metadata: { source_file_id: input.file.id, ...about },
        },
      ],
      results: about,
    };
  },
});
