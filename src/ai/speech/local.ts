// Offline speech-to-text with Debian's pocketsphinx (CMU Sphinx, en-us model): decode once, cut
// long audio into chunks at quiet moments, recognise chunk by chunk with progress.
import { join } from 'node:path';
import {
  debianPackageVersion,
  DEFAULT_POCKETSPHINX_MODEL,
  missingModelFiles,
  ProcessError,
  runPocketsphinx,
  slicePcm,
  type PocketsphinxModel,
} from '../../media/index.js';
import type { EngineInfo } from '../engine.js';
import { EngineUnavailableError } from '../errors.js';
import { progressReporter, subProgress } from '../progress.js';
import { groupWords } from './segments.js';
import { prepareSpeechAudio, withScratch, type SpeechInputOptions } from './prepare.js';
import type { SpeechResult, SpeechWord } from './types.js';

export interface LocalSpeechOptions extends SpeechInputOptions {
  model?: PocketsphinxModel;
  /**
   * Target chunk length in seconds (default 120). Each chunk costs one model load (~0.3 s), so
   * chunks stay long; they exist for progress and so a failure or cancel loses little.
   */
  chunkSeconds?: number;
  /** Timeout of one chunk's recognition; default 60 s + 3x the chunk's length. */
  chunkTimeoutMs?: number;
}

export const DEFAULT_LOCAL_CHUNK_SECONDS = 120;

let versionLookup: Promise<string | null> | null = null;

/** pocketsphinx has no --version: Debian's package version, looked up once per process. */
export function pocketsphinxVersion(): Promise<string | null> {
  versionLookup ??= debianPackageVersion('pocketsphinx');
  return versionLookup;
}

export async function localSpeechEngine(model: PocketsphinxModel = DEFAULT_POCKETSPHINX_MODEL): Promise<EngineInfo> {
  return { name: 'pocketsphinx', model: model.name, version: await pocketsphinxVersion() };
}

function unavailable(model: PocketsphinxModel, detail: string, cause?: unknown): EngineUnavailableError {
  return new EngineUnavailableError(
    'pocketsphinx',
    `local speech recognition is not available: ${detail}. ` +
      'Install it with `apt-get install -y pocketsphinx pocketsphinx-en-us` (Debian/Ubuntu), or configure a speech provider.',
    { cause },
  );
}

/** Transcribes the first audio stream of any audio or video file. */
export async function transcribeLocal(input: string, opts: LocalSpeechOptions): Promise<SpeechResult> {
  const model = opts.model ?? DEFAULT_POCKETSPHINX_MODEL;
  const missing = await missingModelFiles(model);
  if (missing.length > 0) throw unavailable(model, `model files missing (${missing.join(', ')})`);
  const progress = progressReporter(opts.onProgress);
  const chunkSeconds = opts.chunkSeconds ?? DEFAULT_LOCAL_CHUNK_SECONDS;

  const words = await withScratch(opts.workDir, async (dir) => {
    // Decoding is a few percent of the work; recognition the rest, by seconds of audio done.
    const audio = await prepareSpeechAudio(input, dir, {
      ...opts,
      chunkSeconds,
      decodeProgress: subProgress(progress, 0, 0.05),
    });
    const all: SpeechWord[] = [];
    const recognised = (t: number) => progress.report(0.05 + 0.95 * (audio.duration > 0 ? t / audio.duration : 1));
    for (const [i, chunk] of audio.chunks.entries()) {
      const single = audio.chunks.length === 1;
      const path = single ? audio.rawPath : join(dir, `chunk-${i}.raw`);
      if (!single) await slicePcm(audio.rawPath, chunk.start, chunk.end, path);
      try {
        const found = await runPocketsphinx(path, model, {
          timeoutMs: opts.chunkTimeoutMs ?? 60_000 + 3000 * (chunk.end - chunk.start),
          signal: opts.signal,
          onWord: (w) => recognised(chunk.start + w.end),
        });
        for (const w of found) {
          all.push({ text: w.word, start: chunk.start + w.start, end: chunk.start + w.end, confidence: w.confidence });
        }
      } catch (err) {
        if (err instanceof ProcessError && err.reason === 'spawn')
          throw unavailable(model, `${model.binary} could not be started`, err);
        throw err;
      }
      recognised(chunk.end);
    }
    return { all, duration: audio.duration };
  });

  const segments = groupWords(words.all);
  progress.done();
  return {
    detected: words.all.length > 0,
    language: words.all.length > 0 ? model.language : null,
    duration: words.duration,
    words: segments.flatMap((s) => s.words),
    segments,
    speakers: null,
    engine: await localSpeechEngine(model),
  };
}
