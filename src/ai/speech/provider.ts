// Speech-to-text through an OpenAI-compatible `POST /audio/transcriptions` (OpenAI, or a local
// Whisper server): audio decoded once, sent in chunks cut at quiet moments (providers cap uploads,
// OpenAI at 25 MB), answers in verbose_json with word and segment times merged into one result.
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { encodePcmSlice, type SpeechUploadFormat } from '../../media/index.js';
import { ProviderError } from '../errors.js';
import { progressReporter, subProgress } from '../progress.js';
import { lazyValidator } from '../provider/chat.js';
import { providerRequest, type ProviderEndpoint } from '../provider/client.js';
import { languageCode } from './languages.js';
import { prepareSpeechAudio, withScratch, type SpeechInputOptions } from './prepare.js';
import { groupWords, segmentFromWords } from './segments.js';
import { meanConfidence, type SpeechResult, type SpeechSegment, type SpeechWord } from './types.js';

export interface ProviderSpeechOptions extends SpeechInputOptions {
  endpoint: ProviderEndpoint;
  /** e.g. "whisper-1", "gpt-4o-transcribe", or a local server's model name. */
  model: string;
  /** ISO 639-1 hint; the provider detects the language without it. */
  language?: string;
  /** Seconds per upload (default 600: 19 MB as 16 kHz mono WAV, under OpenAI's 25 MB). */
  chunkSeconds?: number;
  /** wav (default: every Whisper server reads it) or flac (about half the bytes). */
  uploadFormat?: SpeechUploadFormat;
}

interface VerboseWord {
  word: string;
  start: number;
  end: number;
  probability?: number;
  speaker?: string | number;
}
interface VerboseSegment {
  start: number;
  end: number;
  text: string;
  avg_logprob?: number;
  speaker?: string | number;
}
interface VerboseTranscription {
  language?: string;
  duration?: number;
  text?: string;
  words?: VerboseWord[];
  segments?: VerboseSegment[];
}

const num = { type: 'number' };
const speaker = { type: ['string', 'number'] };
const verbose = lazyValidator<VerboseTranscription>({
  type: 'object',
  properties: {
    language: { type: 'string' },
    duration: num,
    text: { type: 'string' },
    words: {
      type: 'array',
      items: {
        type: 'object',
        required: ['word', 'start', 'end'],
        properties: { word: { type: 'string' }, start: num, end: num, probability: num, speaker },
      },
    },
    segments: {
      type: 'array',
      items: {
        type: 'object',
        required: ['start', 'end', 'text'],
        properties: { start: num, end: num, text: { type: 'string' }, avg_logprob: num, speaker },
      },
    },
  },
});

const DEFAULT_PROVIDER_CHUNK_SECONDS = 600;

/** Speaker labels ("A", "SPEAKER_01", 3) → 0-based numbers in order of first appearance. */
class SpeakerMap {
  private readonly ids = new Map<string, number>();
  get(label: string | number | undefined): number | undefined {
    if (label === undefined) return undefined;
    const key = String(label);
    let id = this.ids.get(key);
    if (id === undefined) this.ids.set(key, (id = this.ids.size));
    return id;
  }
  count(): number | null {
    return this.ids.size > 0 ? this.ids.size : null;
  }
}

/** One chunk's answer → segments with absolute times. */
function verboseToSegments(answer: VerboseTranscription, offset: number, speakers: SpeakerMap): SpeechSegment[] {
  const words: SpeechWord[] = (answer.words ?? [])
    .filter((w) => w.word.trim())
    .map((w) => {
      const out: SpeechWord = {
        text: w.word.trim(),
        start: offset + w.start,
        end: offset + Math.max(w.start, w.end),
        confidence: typeof w.probability === 'number' ? Math.min(1, Math.max(0, w.probability)) : null,
      };
      const s = speakers.get(w.speaker);
      if (s !== undefined) out.speaker = s;
      return out;
    });
  const segments = (answer.segments ?? []).filter((s) => s.text.trim());
  if (segments.length === 0) return groupWords(words);
  let next = 0;
  return segments
    .map((s) => {
      const start = offset + s.start;
      const end = offset + Math.max(s.start, s.end);
      // Words belong to the segment their middle falls in (segments are in order).
      const own: SpeechWord[] = [];
      while (next < words.length && (words[next]!.start + words[next]!.end) / 2 <= end + 0.01) own.push(words[next++]!);
      const seg =
        own.length > 0
          ? segmentFromWords(own, s.text.trim())
          : { start, end, text: s.text.trim(), confidence: null, words: own };
      seg.start = start;
      seg.end = end;
      if (typeof s.avg_logprob === 'number') seg.confidence = Math.min(1, Math.exp(s.avg_logprob));
      else seg.confidence = meanConfidence(own.map((w) => w.confidence));
      const sp = speakers.get(s.speaker);
      if (sp !== undefined) {
        seg.speaker = sp;
        for (const w of own) w.speaker ??= sp;
      }
      return seg;
    })
    .concat(words.length > next ? [segmentFromWords(words.slice(next))] : []);
}

export async function transcribeWithProvider(input: string, opts: ProviderSpeechOptions): Promise<SpeechResult> {
  const progress = progressReporter(opts.onProgress);
  const format = opts.uploadFormat ?? 'wav';
  const speakers = new SpeakerMap();
  const languages: string[] = [];

  const { segments, duration } = await withScratch(opts.workDir, async (dir) => {
    const audio = await prepareSpeechAudio(input, dir, {
      ...opts,
      chunkSeconds: opts.chunkSeconds ?? DEFAULT_PROVIDER_CHUNK_SECONDS,
      decodeProgress: subProgress(progress, 0, 0.05),
    });
    const all: SpeechSegment[] = [];
    for (const [i, chunk] of audio.chunks.entries()) {
      const file = join(dir, `upload-${i}.${format}`);
      await encodePcmSlice(audio.rawPath, chunk.start, chunk.end, file, format, {
        timeoutMs: 120_000,
        signal: opts.signal,
      });
      const bytes = await readFile(file);
      await rm(file, { force: true });
      const form = new FormData();
      form.append(
        'file',
        new Blob([bytes], { type: format === 'wav' ? 'audio/wav' : 'audio/flac' }),
        `audio.${format}`,
      );
      form.append('model', opts.model);
      form.append('response_format', 'verbose_json');
      form.append('timestamp_granularities[]', 'word');
      form.append('timestamp_granularities[]', 'segment');
      if (opts.language) form.append('language', opts.language);
      // The end of the previous chunk keeps spelling and style continuous across the cut.
      const previous = all
        .slice(-3)
        .map((s) => s.text)
        .join(' ')
        .slice(-200);
      if (previous) form.append('prompt', previous);
      // Without a configured timeout, allow real time for the chunk on top of the usual 120 s:
      // a Whisper server on a CPU can take about as long as the audio.
      const timeoutMs = opts.endpoint.timeoutMs ?? 120_000 + Math.ceil((chunk.end - chunk.start) * 1000);
      const answer = await providerRequest(
        { ...opts.endpoint, timeoutMs },
        'POST',
        '/audio/transcriptions',
        { form },
        opts.signal,
      );
      if (!verbose.validate(answer)) {
        throw new ProviderError(
          `the provider answered 200 to POST /audio/transcriptions with JSON that is not verbose_json: ${verbose.lastErrors()}`,
          true,
          200,
        );
      }
      const lang = languageCode(answer.language);
      if (lang) languages.push(lang);
      all.push(...verboseToSegments(answer, chunk.start, speakers));
      progress.report(0.05 + 0.95 * (audio.duration > 0 ? chunk.end / audio.duration : 1));
    }
    return { segments: all, duration: audio.duration };
  });

  progress.done();
  const words = segments.flatMap((s) => s.words);
  return {
    detected: segments.length > 0,
    language: mostCommon(languages) ?? (segments.length > 0 ? (opts.language ?? null) : null),
    duration,
    words,
    segments,
    speakers: speakers.count(),
    engine: { name: 'openai-compatible', model: opts.model, version: null },
  };
}

function mostCommon(values: string[]): string | null {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best: string | null = null;
  for (const [v, c] of counts) if (best === null || c > (counts.get(best) ?? 0)) best = v;
  return best;
}
