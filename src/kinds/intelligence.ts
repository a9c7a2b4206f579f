import fs from 'node:fs/promises';
import path from 'node:path';
import {
  EngineUnavailableError,
  speechIntelligence,
  structuredOutput,
  transcribeLocal,
  transcribeWithProvider,
  type EngineInfo,
  type ProgressFn,
  type SpeechResult,
  type SpeechSegment,
} from '../ai/index.js';
import type { KindContext, KindInput, ProducedFile } from './define.js';
import { engineUse, SET_TRANSCRIBE, type EngineName, type EngineUse } from './engines.js';

// What the intelligence kinds share: their JSON output file, and speech (transcribed here, or
// the document of an earlier speech task on the same file read back).

type Ctx = Pick<KindContext<unknown>, 'ai' | 'workDir' | 'signal' | 'target' | 'task'>;

/** An intelligence document as the task's output file (`kind`, JSON), in the input's media under the task's ref. */
export async function jsonOutput(
  ctx: Ctx,
  input: KindInput,
  kind: string,
  doc: object,
  metadata: Record<string, unknown> = {},
): Promise<ProducedFile> {
  const file = path.join(ctx.workDir, `${kind}.json`);
  await fs.writeFile(file, `${JSON.stringify(doc, null, 2)}\n`);
  return {
    path: file,
    kind,
    format: 'json',
    extension: 'json',
    mime: 'application/json',
    ref: ctx.target.ref ?? kind,
    metadata: { source_file_id: input.file.id, ...metadata },
  };
}

/** The speech document the speech kind stores: the engine path that ran and the engines used. */
export function speechDocument(result: SpeechResult, engine: EngineName) {
  const { engine: info, ...doc } = speechIntelligence(result);
  return { ...doc, engine, engines: [engineUse('speech', info)] };
}

interface StoredWord {
  text: string;
  start: number;
  end: number;
  confidence: number | null;
}
interface StoredSpeech {
  detected: boolean;
  language: string | null;
  speakers: number | null;
  duration: number;
  engine: EngineName;
  engines: { role: string; name: string; model: string | null; version: string | null }[];
  timeline: {
    start: number;
    end: number;
    text: string;
    confidence: number | null;
    speaker?: number;
    words: StoredWord[];
  }[];
}

const num = { type: 'number' };
const nullableNum = { type: ['number', 'null'] };
const STORED = structuredOutput<StoredSpeech>(
  'stored_speech',
  {
    type: 'object',
    required: ['detected', 'language', 'duration', 'engine', 'engines', 'timeline'],
    properties: {
      detected: { type: 'boolean' },
      language: { type: ['string', 'null'] },
      speakers: { type: ['integer', 'null'] },
      duration: num,
      engine: { enum: ['local', 'provider'] },
      engines: { type: 'array', minItems: 1 },
      timeline: {
        type: 'array',
        items: {
          type: 'object',
          required: ['start', 'end', 'text', 'words'],
          properties: {
            start: num,
            end: num,
            text: { type: 'string' },
            confidence: nullableNum,
            speaker: { type: 'integer' },
            words: {
              type: 'array',
              items: {
                type: 'object',
                required: ['text', 'start', 'end'],
                properties: { text: { type: 'string' }, start: num, end: num, confidence: nullableNum },
              },
            },
          },
        },
      },
    },
  },
  false,
);

/** A stored speech document back as a result, when it came from `engine` (and `language`, if asked). */
export function fromStoredSpeech(doc: unknown, engine: EngineName, language?: string): SpeechResult | null {
  if (!STORED.validate(doc) || doc.engine !== engine) return null;
  if (language && doc.detected && doc.language !== language) return null;
  const info = doc.engines.find((e) => e.role === 'speech') ?? doc.engines[0]!;
  const segments: SpeechSegment[] = doc.timeline.map((t) => ({
    start: t.start,
    end: t.end,
    text: t.text,
    confidence: t.confidence ?? null,
    ...(t.speaker !== undefined ? { speaker: t.speaker } : {}),
    words: t.words.map((w) => ({
      text: w.text,
      start: w.start,
      end: w.end,
      confidence: w.confidence ?? null,
      ...(t.speaker !== undefined ? { speaker: t.speaker } : {}),
    })),
  }));
  const engineInfo: EngineInfo = { name: info.name, model: info.model ?? '', version: info.version };
  return {
    detected: doc.detected,
    language: doc.language,
    duration: doc.duration,
    words: segments.flatMap((s) => s.words),
    segments,
    speakers: doc.speakers ?? null,
    engine: engineInfo,
  };
}

/** Transcribes the input's audio with the chosen engine. */
export async function transcribe(
  ctx: Ctx,
  input: KindInput,
  engine: EngineName,
  onProgress: ProgressFn,
  language?: string,
): Promise<SpeechResult> {
  const common = { workDir: ctx.workDir, probe: input.probe, signal: ctx.signal, onProgress };
  if (engine === 'local') return transcribeLocal(input.path, common);
  const t = ctx.ai.transcribe;
  if (!t) throw new EngineUnavailableError('provider', `no speech-to-text provider is configured: ${SET_TRANSCRIBE}`);
  return transcribeWithProvider(input.path, {
    ...common,
    endpoint: t.endpoint,
    model: t.model,
    ...(language ? { language } : {}),
  });
}

export interface SpeechUse {
  result: SpeechResult;
  /** The speech output file read back instead of transcribing, when there was one. */
  reused: boolean;
  use: EngineUse;
}

/** The input's speech: an earlier speech output of this file made by `engine`, else a new transcription. */
export async function speechOf(
  ctx: Ctx,
  input: KindInput,
  engine: EngineName,
  onProgress: ProgressFn,
  language?: string,
): Promise<SpeechUse> {
  const stored = fromStoredSpeech(await ctx.ai.storedSpeech(), engine, language);
  if (stored) {
    onProgress(100);
    return { result: stored, reused: true, use: engineUse('speech', stored.engine, 'reused an earlier speech output') };
  }
  const result = await transcribe(ctx, input, engine, onProgress, language);
  return { result, reused: false, use: engineUse('speech', result.engine) };
}

/** The first `maxWords` words of a transcript, for summaries and titles. */
export function excerpt(result: SpeechResult, maxWords = 40): string {
  const words = result.words.map((w) => w.text);
  return words.slice(0, maxWords).join(' ') + (words.length > maxWords ? ' …' : '');
}

/**
 * A transcript that helps another kind (chapters, description, outline, prompt): none for a file
 * without sound or when no speech engine is there — the kind does without, and says so.
 */
export async function helperSpeechOf(
  ctx: Ctx,
  input: KindInput,
  engine: EngineName | null,
  onProgress: ProgressFn,
): Promise<{ result: SpeechResult | null; uses: EngineUse[] }> {
  if (!input.probe.hasAudio) return { result: null, uses: [] };
  if (!engine) {
    onProgress(100);
    return {
      result: null,
      uses: [
        {
          role: 'speech',
          name: 'none',
          model: null,
          version: null,
          note: `not transcribed: no speech engine (apt-get install -y pocketsphinx pocketsphinx-en-us, or ${SET_TRANSCRIBE})`,
        },
      ],
    };
  }
  const speech = await speechOf(ctx, input, engine, onProgress);
  return { result: speech.result, uses: [speech.use] };
}
