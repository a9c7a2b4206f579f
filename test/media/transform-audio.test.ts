import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  audioOutputFormat,
  buildAudioArgs,
  expectedDuration,
  isMediaTransformError,
  mediaBinaries,
  probeFile,
  runFfmpeg,
  runProcess,
  sampleRateAllowed,
  type AudioFormat,
  type AudioOptions,
  type ProbeResult,
} from '../../src/media/index.js';
import { fixture, type FixtureName } from '../helpers/fixtures.js';

const LIMITS = { maxPixels: 100_000_000, maxDurationSeconds: 3600 };
const SRC: ProbeResult = {
  kind: 'audio',
  format: 'mp3',
  extension: 'mp3',
  mime: 'audio/mpeg',
  duration: 3,
  hasVideo: false,
  hasAudio: true,
};
const args = (o: Partial<AudioOptions>, src: ProbeResult = SRC) =>
  buildAudioArgs('/in/a', '/out/b', { format: 'mp3', ...o }, src);
const after1 = (a: string[], flag: string) => a[a.indexOf(flag) + 1];

describe('audio arguments', () => {
  const cases: [AudioFormat, codec: string, muxer: string, bitrate: string | undefined][] = [
    ['mp3', 'libmp3lame', 'mp3', '192000'],
    ['aac', 'aac', 'ipod', '128000'],
    ['m4a', 'aac', 'ipod', '128000'],
    ['wav', 'pcm_s16le', 'wav', undefined],
    ['ogg', 'libopus', 'ogg', '96000'],
    ['opus', 'libopus', 'opus', '96000'],
    ['flac', 'flac', 'flac', undefined],
  ];
  for (const [format, codec, muxer, bitrate] of cases) {
    it(`${format}: ${codec} in ${muxer}`, () => {
      const a = args({ format });
      assert.equal(after1(a, '-c:a'), codec);
      assert.equal(after1(a, '-f'), muxer);
      assert.equal(a.includes('-b:a') ? after1(a, '-b:a') : undefined, bitrate);
      assert.equal(after1(a, '-map'), '0:a:0');
      assert.ok(a.includes('-vn'));
      assert.equal(a.at(-1), 'file:/out/b');
    });
  }

  it('applies bitrate, channels, sample rate and trim', () => {
    const a = args({ bitrate: 64_000, channels: 1, sample_rate: 22050, start: 1, end: 2.5 });
    assert.deepEqual([after1(a, '-b:a'), after1(a, '-ac'), after1(a, '-ar')], ['64000', '1', '22050']);
    assert.ok(a.indexOf('-ss') < a.indexOf('-i') && a.indexOf('-t') > a.indexOf('-i'));
    assert.deepEqual([after1(a, '-ss'), after1(a, '-t')], ['1.000', '1.500']);
    assert.ok(!args({ format: 'flac', bitrate: 64_000 }).includes('-b:a'));
  });

  it('names extensions and MIME types', () => {
    assert.deepEqual(audioOutputFormat('aac'), { extension: 'm4a', mime: 'audio/mp4' });
    assert.deepEqual(audioOutputFormat('mp3'), { extension: 'mp3', mime: 'audio/mpeg' });
    assert.deepEqual(audioOutputFormat('opus'), { extension: 'opus', mime: 'audio/ogg' });
    assert.deepEqual(audioOutputFormat('wav'), { extension: 'wav', mime: 'audio/wav' });
  });

  it('checks sample rates per encoder', () => {
    assert.ok(sampleRateAllowed('opus', 48000) && !sampleRateAllowed('opus', 44100));
    assert.ok(sampleRateAllowed('mp3', 44100) && !sampleRateAllowed('mp3', 96000));
    assert.ok(sampleRateAllowed('flac', 96000) && !sampleRateAllowed('wav', 0));
    assert.throws(() => args({ format: 'ogg', sample_rate: 44100 }), RangeError);
  });

  it('refuses a source without audio and a window past its end', () => {
    const silent = { ...SRC, kind: 'video' as const, hasVideo: true, hasAudio: false };
    assert.throws(
      () => args({}, silent),
      (e: unknown) => isMediaTransformError(e) && e.code === 'no_audio_stream',
    );
    assert.throws(
      () => args({ start: 5 }),
      (e: unknown) => isMediaTransformError(e) && e.code === 'invalid_for_input',
    );
  });
});

async function channelsOf(path: string): Promise<number> {
  const { stdout } = await runProcess(
    mediaBinaries().ffprobe,
    ['-v', 'error', '-select_streams', 'a:0', '-show_entries', 'stream=channels,sample_rate', '-of', 'json', path],
    { timeoutMs: 10_000 },
  );
  return (JSON.parse(stdout.toString()) as { streams: { channels: number }[] }).streams[0]!.channels;
}

describe('audio transform (ffmpeg)', () => {
  let dir = '';
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'mediad-audio-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  async function transform(
    name: FixtureName,
    opts: AudioOptions,
    progress?: number[],
  ): Promise<ProbeResult & { path: string }> {
    const input = await fixture(name);
    const source = await probeFile(input, LIMITS);
    const out = join(dir, `${name}-${Math.random().toString(36).slice(2)}.${audioOutputFormat(opts.format).extension}`);
    await runFfmpeg(buildAudioArgs(input, out, opts, source, LIMITS), {
      timeoutMs: 30_000,
      expectedDurationSeconds: expectedDuration(opts, source),
      onProgress: (p) => progress?.push(p),
    });
    return { ...(await probeFile(out, LIMITS)), path: out };
  }

  const expected: [AudioFormat, format: string, codec: string][] = [
    ['mp3', 'mp3', 'mp3'],
    ['aac', 'm4a', 'aac'],
    ['wav', 'wav', 'pcm_s16le'],
    ['ogg', 'ogg', 'opus'],
    ['opus', 'ogg', 'opus'],
    ['flac', 'flac', 'flac'],
  ];
  for (const [format, container, codec] of expected) {
    it(`extracts the audio of an mp4 as ${format}`, async () => {
      const progress: number[] = [];
      const out = await transform('video-mp4', { format }, progress);
      assert.deepEqual([out.kind, out.format, out.audioCodec, out.hasVideo], ['audio', container, codec, false]);
      assert.ok(Math.abs(out.duration! - 2) <= 0.2, String(out.duration));
      assert.equal(progress.at(-1), 100);
    });
  }

  it('trims and downmixes', async () => {
    const out = await transform('audio-mp3', { format: 'm4a', start: 0.5, end: 2.5, channels: 1 });
    assert.ok(Math.abs(out.duration! - 2) <= 0.2, String(out.duration));
    assert.equal(await channelsOf(out.path), 1);
  });

  it('reads webm/opus input', async () => {
    const out = await transform('video-webm', { format: 'mp3', bitrate: 96_000 });
    assert.deepEqual([out.format, out.audioCodec], ['mp3', 'mp3']);
  });

  it('throws no_audio_stream for a silent video', async () => {
    const input = await fixture('video-noaudio-mp4');
    const source = await probeFile(input, LIMITS);
    assert.throws(
      () => buildAudioArgs(input, join(dir, 'x.mp3'), { format: 'mp3' }, source),
      (e: unknown) => isMediaTransformError(e) && e.code === 'no_audio_stream',
    );
  });
});

describe('surround sources', () => {
  it('opus keeps 5.1(side) audio as Vorbis-order 5.1 instead of failing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mediad-audio51-'));
    try {
      const input = join(dir, 's51.wav');
      await runProcess(
        mediaBinaries().ffmpeg,
        [
          '-v',
          'error',
          '-f',
          'lavfi',
          '-i',
          'sine=duration=0.5',
          '-af',
          'pan=5.1(side)|c0=c0|c1=c0|c2=c0|c3=c0|c4=c0|c5=c0',
          input,
        ],
        { timeoutMs: 10_000 },
      );
      const out = join(dir, 'o.ogg');
      await runFfmpeg(buildAudioArgs(input, out, { format: 'ogg' }, await probeFile(input, LIMITS)), {
        timeoutMs: 20_000,
      });
      assert.equal(await channelsOf(out), 6);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
