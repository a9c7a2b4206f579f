// Provider speech-to-text against the loopback OpenAI-compatible server: the multipart upload
// as sent (fields, WAV/FLAC audio of each chunk), chunks cut in quiet moments, times merged.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { isMediaTransformError } from '../../src/media/index.js';
import { createGuardedClient, type GuardedClient } from '../../src/net/index.js';
import {
  isProviderError,
  speechIntelligence,
  transcribeWithProvider,
  type ProviderEndpoint,
} from '../../src/ai/index.js';
import { spokenParagraph, videoWithoutAudio } from '../helpers/ai-fixtures.js';
import { startOpenAiServer, type OpenAiServer } from '../helpers/openai-server.js';

const KEY = 'sk-speech-abcdef0123456789';
const SENTENCES = [
  'Good morning everyone and welcome to the weekly meeting.',
  'Please open the window and let some fresh air into the room.',
  'The children played in the park until the sun went down.',
  'The weather today is sunny with a light breeze from the west.',
];

let server: OpenAiServer;
let client: GuardedClient;
let ep: ProviderEndpoint;
let work: string;

before(async () => {
  server = await startOpenAiServer();
  client = createGuardedClient({
    allowPrivate: false,
    allowHosts: [server.host],
    maxRedirects: 0,
    connectTimeoutMs: 2000,
    idleTimeoutMs: 10_000,
    totalTimeoutMs: 30_000,
    maxBytes: 64 * 1024 * 1024,
    userAgent: 'mediad-test/1',
  });
  ep = { baseUrl: server.baseUrl, apiKey: KEY, request: client.request };
  work = await mkdtemp(join(tmpdir(), 'mediad-ai-provider-speech-'));
});
after(async () => {
  await client?.close();
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});
beforeEach(() => {
  server.requests.length = 0;
  server.script.clear();
});

/** Seconds and the RMS of the last 50 ms of a 16 kHz mono 16-bit WAV upload. */
function wavFacts(bytes: Buffer): { seconds: number; tailRms: number; rate: number; channels: number } {
  assert.equal(bytes.toString('latin1', 0, 4), 'RIFF');
  assert.equal(bytes.toString('latin1', 8, 16), 'WAVEfmt ');
  const data = bytes.subarray(44);
  const samples = data.length / 2;
  let sum = 0;
  const tail = Math.min(samples, 800);
  for (let i = samples - tail; i < samples; i++) sum += data.readInt16LE(i * 2) ** 2;
  return {
    seconds: samples / 16000,
    tailRms: Math.sqrt(sum / Math.max(1, tail)),
    rate: bytes.readUInt32LE(24),
    channels: bytes.readUInt16LE(22),
  };
}

describe('transcribeWithProvider', () => {
  it('uploads chunks cut at pauses and merges their words at the right times', async () => {
    const wav = await spokenParagraph(SENTENCES, 1);
    // Each chunk's answer: one word 0.1-0.4 s into it, in a segment spoken by A or B in turn.
    server.transcribe = (audio, i) => {
      const seconds = (audio.length - 44) / 32000;
      return {
        task: 'transcribe',
        language: 'english',
        duration: seconds,
        text: ` chunk${i}`,
        words: [{ word: ` chunk${i}`, start: 0.1, end: 0.4 }],
        segments: [
          {
            id: 0,
            seek: 0,
            start: 0.1,
            end: 0.4,
            text: ` chunk${i}`,
            avg_logprob: -0.2,
            no_speech_prob: 0.01,
            speaker: i % 2 ? 'B' : 'A',
          },
        ],
      };
    };
    const progress: number[] = [];
    const r = await transcribeWithProvider(wav, {
      workDir: work,
      endpoint: ep,
      model: 'whisper-1',
      chunkSeconds: 6,
      onProgress: (p) => progress.push(p),
    });
    const uploads = server.requests.filter((q) => q.path === '/v1/audio/transcriptions');
    assert.ok(uploads.length >= 3, `${uploads.length} uploads`);
    let offset = 0;
    for (const [i, q] of uploads.entries()) {
      assert.equal(q.headers.authorization, `Bearer ${KEY}`);
      assert.match(String(q.headers['content-type']), /^multipart\/form-data; boundary=/);
      assert.deepEqual(q.fields?.model, ['whisper-1']);
      assert.deepEqual(q.fields?.response_format, ['verbose_json']);
      assert.deepEqual(q.fields?.['timestamp_granularities[]'], ['word', 'segment']);
      assert.equal(q.fields?.prompt?.length ?? 0, i === 0 ? 0 : 1, 'the previous text is sent as the prompt');
      const file = q.files?.find((f) => f.field === 'file');
      assert.equal(file?.type, 'audio/wav');
      const facts = wavFacts(file!.bytes);
      assert.deepEqual([facts.rate, facts.channels], [16000, 1]);
      // Cut where it is quiet: flite's pauses are digital silence, its speech hundreds to thousands.
      if (i < uploads.length - 1)
        assert.ok(facts.tailRms < 50, `chunk ${i} ends in sound (RMS ${facts.tailRms.toFixed(0)})`);
      assert.ok(
        Math.abs(r.words[i]!.start - (offset + 0.1)) < 0.002,
        `word ${i} at ${r.words[i]!.start}, chunk starts at ${offset}`,
      );
      offset += facts.seconds;
    }
    assert.ok(Math.abs(offset - r.duration) < 0.01, `chunks cover ${offset} s of ${r.duration} s`);
    assert.deepEqual(
      r.words.map((w) => w.text),
      uploads.map((_, i) => `chunk${i}`),
    );
    assert.equal(r.language, 'en');
    assert.equal(r.speakers, 2);
    assert.deepEqual(r.engine, { name: 'openai-compatible', model: 'whisper-1', version: null });
    assert.equal(progress.at(-1), 100);
    const json = speechIntelligence(r);
    assert.deepEqual(
      json.timeline.map((t) => t.speaker),
      uploads.map((_, i) => i % 2),
    );
    assert.ok(Math.abs(json.timeline[0]!.confidence! - Math.exp(-0.2)) < 0.001);
  });

  it('can upload FLAC', async () => {
    server.transcribe = () => ({ language: 'en', text: '', segments: [], words: [] });
    const r = await transcribeWithProvider(await spokenParagraph(SENTENCES.slice(0, 1), 1), {
      workDir: work,
      endpoint: ep,
      model: 'm',
      uploadFormat: 'flac',
    });
    const file = server.requests[0]!.files![0]!;
    assert.equal(file.type, 'audio/flac');
    assert.equal(file.bytes.toString('latin1', 0, 4), 'fLaC');
    assert.equal(r.detected, false);
  });

  it('fails with provider_failed on an answer that is not verbose_json, and with no_audio_stream before any upload', async () => {
    server.transcribe = () => ({ words: 'nope' });
    await assert.rejects(
      transcribeWithProvider(await spokenParagraph(SENTENCES.slice(0, 1), 1), {
        workDir: work,
        endpoint: ep,
        model: 'm',
      }),
      (e: unknown) => isProviderError(e) && e.transient && /not verbose_json/.test(e.message),
    );
    server.requests.length = 0;
    await assert.rejects(
      transcribeWithProvider(await videoWithoutAudio(), { workDir: work, endpoint: ep, model: 'm' }),
      (e: unknown) => isMediaTransformError(e) && e.code === 'no_audio_stream',
    );
    assert.equal(server.requests.length, 0);
  });
});
