// Chapters of a video or audio file without a language model: scene cuts (video) and pauses in
// speech (when a speech result is given) make the boundaries; title cards read by OCR, else
// the first words spoken, make the titles.
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { probeFile, type ProbeResult, type SceneCut } from '../../media/index.js';
import { progressReporter, subProgress } from '../progress.js';
import type { SpeechResult } from '../speech/types.js';
import { grabKeyframes } from '../vision/keyframes.js';
import { ocrImage } from '../vision/ocr.js';
import { findSceneCuts } from '../vision/scenes.js';
import type { Chapter } from './format.js';
import { planChapters, speechPauses } from './plan.js';
import { chapterTitle, titleFromOcr, titleFromSpeech, type TitleSource } from './titles.js';

export interface ChapterDetectOptions {
  /** Scratch space for keyframes (a subdirectory is made and removed). */
  workDir: string;
  probe?: Pick<ProbeResult, 'hasVideo' | 'duration'>;
  /** Its pauses keep boundaries out of sentences; its words title chapters without a title card. */
  speech?: SpeechResult;
  minChapterSeconds?: number;
  sceneThreshold?: number;
  /** Read title cards (default true). */
  ocr?: boolean;
  /** Confidence (0–1) an OCR line needs to become a title (default 0.8). */
  ocrMinConfidence?: number;
  signal?: AbortSignal;
  onProgress?: (percent: number) => void;
}

export interface DetectedChapter extends Chapter {
  titleSource: TitleSource;
}

const UNLIMITED = { maxPixels: Number.MAX_SAFE_INTEGER, maxDurationSeconds: Number.MAX_SAFE_INTEGER };

/** Where a chapter's title card is looked for: 1 s in, or its middle when shorter than 2 s. */
export function titleCardTime(c: { start: number; end: number }): number {
  return Math.min(c.start + 1, (c.start + c.end) / 2);
}

export async function detectChapters(
  input: string,
  opts: ChapterDetectOptions,
): Promise<{ chapters: DetectedChapter[]; cuts: SceneCut[] }> {
  const probe = opts.probe ?? (await probeFile(input, UNLIMITED, { signal: opts.signal }));
  const duration = probe.duration ?? opts.speech?.duration ?? 0;
  const progress = progressReporter(opts.onProgress);
  const cuts = probe.hasVideo
    ? await findSceneCuts(input, {
        probe,
        threshold: opts.sceneThreshold,
        signal: opts.signal,
        onProgress: subProgress(progress, 0, 0.6),
      })
    : [];
  const words = opts.speech?.words ?? [];
  const spans = planChapters({
    duration,
    cuts,
    pauses: words.length > 0 ? speechPauses(words, duration) : [],
    minChapterSeconds: opts.minChapterSeconds,
  });

  const ocrTitles: (string | null)[] = spans.map(() => null);
  if (probe.hasVideo && opts.ocr !== false && spans.length > 0) {
    const dir = await mkdtemp(join(opts.workDir, 'chapters-'));
    try {
      const frames = await grabKeyframes(input, spans.map(titleCardTime), dir, { duration, signal: opts.signal });
      for (const [i, frame] of frames.entries()) {
        const read = await ocrImage(frame.path, { signal: opts.signal });
        ocrTitles[i] = titleFromOcr(read.lines, opts.ocrMinConfidence ?? 0.8);
        progress.report(0.6 + (0.4 * (i + 1)) / frames.length);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  const chapters = spans.map((s, i): DetectedChapter => {
    const spoken = words.filter((w) => w.start >= s.start && w.start < s.end);
    const { title, source } = chapterTitle(i, ocrTitles[i] ?? null, titleFromSpeech(spoken));
    return { index: s.index, start: s.start, end: s.end, title, titleSource: source };
  });
  progress.done();
  return { chapters, cuts };
}
