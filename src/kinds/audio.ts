import { Type, type Static } from 'typebox';
import { audioOutputFormat, buildAudioArgs, sampleRateAllowed, type AudioOptions } from '../media/index.js';
import { Seconds, trimProblems } from './common-options.js';
import { defineKind } from './define.js';
import { transcode } from './transcode.js';

const Options = Type.Object(
  {
    format: Type.Optional(Type.Enum(['mp3', 'aac', 'm4a', 'wav', 'ogg', 'opus', 'flac'])),
    bitrate: Type.Optional(Type.Integer({ minimum: 32_000, maximum: 320_000 })),
    start: Type.Optional(Seconds),
    end: Type.Optional(Seconds),
    channels: Type.Optional(Type.Union([Type.Literal(1), Type.Literal(2)])),
    sample_rate: Type.Optional(Type.Integer({ minimum: 8_000, maximum: 192_000 })),
  },
  { additionalProperties: false },
);

const resolve = (o: Static<typeof Options>): AudioOptions => ({ ...o, format: o.format ?? 'mp3' });

/** audio: extract or transcode the audio of an audio or video file; a source without audio fails with no_audio_stream. */
export const audioKind = defineKind({
  kind: 'audio',
  options: Options,
  needsInputFile: true,
  inputKinds: ['audio', 'video'],
  problems(options) {
    const o = resolve(options);
    const out = trimProblems(o);
    if (o.sample_rate !== undefined && !sampleRateAllowed(o.format, o.sample_rate))
      out.push({ field: 'sample_rate', message: `is not a sample rate ${o.format} supports` });
    return out;
  },
  async run(ctx, input) {
    const o = resolve(ctx.options);
    const { extension, mime } = audioOutputFormat(o.format);
    const { path: out, probe } = await transcode(ctx, input, o, extension, buildAudioArgs);
    return {
      files: [{ path: out, kind: 'audio', format: probe.format, extension, mime, duration: probe.duration, probe }],
    };
  },
});
