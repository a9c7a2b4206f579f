// Pure ffmpeg argv for the audio transform (extract or transcode the first audio stream).
import { ffmpegPreamble, fileUrl, oneStreamOf } from './ffmpeg-preamble.js';
import type { ProbeResult } from './probe.js';
import { MediaTransformError } from './transform-error.js';
import { cappedLengthArgs, outputCap, type DurationLimit } from './duration-cap.js';
import { seekArgs, trimWindow } from './trim.js';

export type AudioFormat = 'mp3' | 'aac' | 'm4a' | 'wav' | 'ogg' | 'opus' | 'flac';

export interface AudioOptions {
  format: AudioFormat;
  /** Bits per second; ignored by the lossless formats (wav, flac). */
  bitrate?: number;
  start?: number;
  end?: number;
  channels?: 1 | 2;
  sample_rate?: number;
}

interface AudioCodecSpec {
  extension: string;
  mime: string;
  muxer: string;
  codec: string;
  /** Default bitrate in bps; undefined for lossless. */
  bitrate?: number;
  /** Sample rates the encoder takes; undefined: any. */
  rates?: readonly number[];
}

const MP3_RATES = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000];
const OPUS_RATES = [8000, 12000, 16000, 24000, 48000];
// "aac" is stored as .m4a: raw ADTS cannot be seeked or carry a duration, MP4 can.
const M4A: AudioCodecSpec = { extension: 'm4a', mime: 'audio/mp4', muxer: 'ipod', codec: 'aac', bitrate: 128_000 };

const SPECS: Readonly<Record<AudioFormat, AudioCodecSpec>> = {
  mp3: { extension: 'mp3', mime: 'audio/mpeg', muxer: 'mp3', codec: 'libmp3lame', bitrate: 192_000, rates: MP3_RATES },
  aac: M4A,
  m4a: M4A,
  wav: { extension: 'wav', mime: 'audio/wav', muxer: 'wav', codec: 'pcm_s16le' },
  ogg: { extension: 'ogg', mime: 'audio/ogg', muxer: 'ogg', codec: 'libopus', bitrate: 96_000, rates: OPUS_RATES },
  opus: { extension: 'opus', mime: 'audio/ogg', muxer: 'opus', codec: 'libopus', bitrate: 96_000, rates: OPUS_RATES },
  flac: { extension: 'flac', mime: 'audio/flac', muxer: 'flac', codec: 'flac' },
};

/**
 * libopus takes only Vorbis-order layouts and does not advertise them, so ffmpeg would not
 * convert e.g. 5.1(side) by itself and the encoder fails; this lets ffmpeg pick the nearest.
 */
export const OPUS_LAYOUT_FILTER = 'aformat=channel_layouts=mono|stereo|3.0|quad|5.0|5.1|6.1|7.1';

export function audioOutputFormat(format: AudioFormat): { extension: string; mime: string } {
  const { extension, mime } = SPECS[format];
  return { extension, mime };
}

/** For the engine's validation: opus and mp3 take a fixed set of rates, the others any. */
export function sampleRateAllowed(format: AudioFormat, rate: number): boolean {
  const rates = SPECS[format].rates;
  return Number.isInteger(rate) && rate > 0 && (rates === undefined || rates.includes(rate));
}

/** `limit`: as for buildVideoArgs, an output cap that keeps decoding within the duration limit. */
export function buildAudioArgs(
  inputPath: string,
  outputPath: string,
  opts: AudioOptions,
  source: ProbeResult,
  limit?: DurationLimit,
): string[] {
  if (!source.hasAudio) throw new MediaTransformError('no_audio_stream', 'the source has no audio stream');
  const spec = SPECS[opts.format];
  if (opts.sample_rate !== undefined && !sampleRateAllowed(opts.format, opts.sample_rate)) {
    throw new RangeError(`sample rate ${opts.sample_rate} is not valid for ${opts.format}`);
  }
  const win = trimWindow(opts, source.duration);
  const cap = limit && outputCap(win, source, limit);
  const bitrate = spec.bitrate === undefined ? undefined : Math.round(opts.bitrate ?? spec.bitrate);
  return [
    ...ffmpegPreamble({ progress: true }),
    ...seekArgs(win),
    ...oneStreamOf(inputPath, 'audio'),
    ...cappedLengthArgs(win, cap),
    ...(spec.codec === 'libopus' ? ['-af', OPUS_LAYOUT_FILTER] : []),
    '-c:a',
    spec.codec,
    ...(bitrate === undefined ? [] : ['-b:a', String(bitrate)]),
    ...(opts.channels ? ['-ac', String(opts.channels)] : []),
    ...(opts.sample_rate ? ['-ar', String(opts.sample_rate)] : []),
    // Same as video: tags can carry personal data; cover art is dropped by -vn.
    '-map_metadata',
    '-1',
    '-map_chapters',
    '-1',
    ...(spec.muxer === 'ipod' ? ['-movflags', '+faststart'] : []),
    '-f',
    spec.muxer,
    fileUrl(outputPath),
  ];
}
