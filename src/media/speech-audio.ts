// Audio prepared for speech engines: any input -> 16 kHz mono signed 16-bit PCM (headerless),
// the format pocketsphinx reads, and slices of that PCM as WAV or FLAC uploads for providers.
import { open, writeFile } from 'node:fs/promises';
import { runFfmpeg } from './ffmpeg-run.js';
import { formatSeconds } from './ffprobe-args.js';
import { ffmpegPreamble, fileUrl, oneStreamOf } from './ffmpeg-preamble.js';

export const SPEECH_SAMPLE_RATE = 16_000;
/** Bytes per second of 16 kHz mono s16le. */
export const SPEECH_BYTES_PER_SECOND = SPEECH_SAMPLE_RATE * 2;

/** ffmpeg argv: first audio stream -> raw 16 kHz mono s16le at `outRaw`, with `-progress` on stdout. */
export function speechPcmArgs(inputPath: string, outRaw: string): string[] {
  return [
    ...ffmpegPreamble({ progress: true }),
    ...oneStreamOf(inputPath, 'audio'),
    '-ac',
    '1',
    '-ar',
    String(SPEECH_SAMPLE_RATE),
    '-c:a',
    'pcm_s16le',
    '-f',
    's16le',
    fileUrl(outRaw),
  ];
}

export interface SpeechPcmOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  expectedDurationSeconds?: number;
  onProgress?: (percent: number) => void;
}

/** Decodes the first audio stream to raw PCM; returns its length in seconds. */
export async function decodeSpeechPcm(inputPath: string, outRaw: string, opts: SpeechPcmOptions): Promise<number> {
  await runFfmpeg(speechPcmArgs(inputPath, outRaw), opts);
  const fh = await open(outRaw, 'r');
  try {
    return (await fh.stat()).size / SPEECH_BYTES_PER_SECOND;
  } finally {
    await fh.close();
  }
}

/** Byte offset of `seconds` in the PCM, on a sample boundary. */
export function pcmOffset(seconds: number): number {
  return Math.max(0, Math.round(seconds * SPEECH_SAMPLE_RATE)) * 2;
}

/** Reads the samples between two times (clamped to the file). */
export async function readPcm(rawPath: string, fromSeconds: number, toSeconds: number): Promise<Int16Array> {
  const fh = await open(rawPath, 'r');
  try {
    const size = (await fh.stat()).size;
    const start = Math.min(pcmOffset(fromSeconds), size);
    const end = Math.min(pcmOffset(toSeconds), size);
    const buf = Buffer.alloc(Math.max(0, end - start));
    if (buf.length > 0) await fh.read(buf, 0, buf.length, start);
    // Copy into an aligned buffer: Int16Array needs an even byte offset.
    const samples = new Int16Array(buf.length / 2);
    for (let i = 0; i < samples.length; i++) samples[i] = buf.readInt16LE(i * 2);
    return samples;
  } finally {
    await fh.close();
  }
}

/**
 * The 44-byte RIFF header of 16 kHz mono PCM. Written by hand because it is fixed, tiny and
 * spares a process start per chunk.
 */
export function wavHeader(dataBytes: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVEfmt ', 8, 'latin1');
  h.writeUInt32LE(16, 16); // fmt chunk size
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(SPEECH_SAMPLE_RATE, 24);
  h.writeUInt32LE(SPEECH_BYTES_PER_SECOND, 28);
  h.writeUInt16LE(2, 32); // block align
  h.writeUInt16LE(16, 34); // bits per sample
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

/** Copies the PCM between two times to `outPath` as raw PCM (same format). */
export async function slicePcm(
  rawPath: string,
  fromSeconds: number,
  toSeconds: number,
  outPath: string,
): Promise<void> {
  const fh = await open(rawPath, 'r');
  try {
    const size = (await fh.stat()).size;
    const start = Math.min(pcmOffset(fromSeconds), size);
    const end = Math.min(pcmOffset(toSeconds), size);
    const buf = Buffer.alloc(end - start);
    if (buf.length > 0) await fh.read(buf, 0, buf.length, start);
    await writeFile(outPath, buf);
  } finally {
    await fh.close();
  }
}

export type SpeechUploadFormat = 'wav' | 'flac';

/** A slice of the PCM as an upload file (WAV written directly; FLAC through ffmpeg). */
export async function encodePcmSlice(
  rawPath: string,
  fromSeconds: number,
  toSeconds: number,
  outPath: string,
  format: SpeechUploadFormat,
  opts: { timeoutMs: number; signal?: AbortSignal },
): Promise<void> {
  if (format === 'wav') {
    const fh = await open(rawPath, 'r');
    try {
      const size = (await fh.stat()).size;
      const start = Math.min(pcmOffset(fromSeconds), size);
      const end = Math.min(pcmOffset(toSeconds), size);
      const buf = Buffer.alloc(44 + end - start);
      wavHeader(end - start).copy(buf, 0);
      if (end > start) await fh.read(buf, 44, end - start, start);
      await writeFile(outPath, buf);
    } finally {
      await fh.close();
    }
    return;
  }
  // Our own intermediate file: the raw demuxer is forced, so no format whitelist applies.
  await runFfmpeg(
    [
      ...ffmpegPreamble({ untrustedInput: false }),
      '-protocol_whitelist',
      'file',
      '-f',
      's16le',
      '-ar',
      String(SPEECH_SAMPLE_RATE),
      '-ac',
      '1',
      '-ss',
      formatSeconds(fromSeconds),
      '-t',
      formatSeconds(Math.max(0, toSeconds - fromSeconds)),
      '-i',
      fileUrl(rawPath),
      '-c:a',
      'flac',
      '-f',
      'flac',
      fileUrl(outPath),
    ],
    opts,
  );
}
