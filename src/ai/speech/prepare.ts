// Shared first step of both speech engines: check there is audio, decode it once to 16 kHz mono
// PCM in a scratch directory, and plan chunk cuts in its quiet moments.
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  decodeSpeechPcm,
  MediaTransformError,
  probeFile,
  readPcm,
  SPEECH_SAMPLE_RATE,
  type ProbeResult,
} from '../../media/index.js';
import { chunksFromCuts, chunkTargets, quietestTime, type Chunk } from './chunks.js';

export interface SpeechInputOptions {
  /** Scratch space (e.g. the task's work dir): a subdirectory is made in it and removed afterwards. */
  workDir: string;
  /** The input's probe when the caller has it (saves an ffprobe run). */
  probe?: Pick<ProbeResult, 'hasAudio' | 'duration'>;
  signal?: AbortSignal;
  /** Integer percent, strictly increasing, 100 at the end. */
  onProgress?: (percent: number) => void;
}

export interface PreparedAudio {
  rawPath: string;
  duration: number;
  chunks: Chunk[];
}

const UNLIMITED = { maxPixels: Number.MAX_SAFE_INTEGER, maxDurationSeconds: Number.MAX_SAFE_INTEGER };

export async function ensureAudio(
  input: string,
  probe: SpeechInputOptions['probe'],
  signal?: AbortSignal,
): Promise<number | undefined> {
  const p = probe ?? (await probeFile(input, UNLIMITED, { signal }));
  if (!p.hasAudio) {
    throw new MediaTransformError(
      'no_audio_stream',
      'the file has no audio stream: speech recognition needs audio (a video with a soundtrack, or an audio file)',
    );
  }
  return p.duration;
}

/** Runs `work` with a fresh scratch directory that is removed whatever happens. */
export async function withScratch<T>(workDir: string, work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(workDir, 'speech-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function prepareSpeechAudio(
  input: string,
  dir: string,
  opts: SpeechInputOptions & { chunkSeconds: number; decodeProgress?: (percent: number) => void },
): Promise<PreparedAudio> {
  const expected = await ensureAudio(input, opts.probe, opts.signal);
  const rawPath = join(dir, 'audio.raw');
  const duration = await decodeSpeechPcm(input, rawPath, {
    // Decoding runs far faster than real time; the bound only stops a wedged ffmpeg.
    timeoutMs: 120_000 + (expected ?? 3600) * 1000,
    signal: opts.signal,
    expectedDurationSeconds: expected,
    onProgress: opts.decodeProgress,
  });
  const cuts: number[] = [];
  for (const t of chunkTargets(duration, { chunkSeconds: opts.chunkSeconds })) {
    const samples = await readPcm(rawPath, t.from, t.to);
    cuts.push(quietestTime(samples, SPEECH_SAMPLE_RATE, t.from, t.target));
  }
  return { rawPath, duration, chunks: chunksFromCuts(duration, cuts) };
}
