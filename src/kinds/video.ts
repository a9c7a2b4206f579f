import { Type, type Static } from 'typebox';
import type { ErrorDetail } from '../errors.js';
import {
  DEFAULT_VIDEO_QUALITY,
  buildVideoArgs,
  codecAllowedIn,
  defaultCodecFor,
  presetAllowed,
  videoOutputFormat,
  type VideoOptions,
} from '../media/index.js';
import { Dimension, Hex, PositionOption, QualityOption, Seconds, qualityOf, trimProblems } from './common-options.js';
import { mimeWithCodecs } from './output-facts.js';
import { defineKind } from './define.js';
import { transcode } from './transcode.js';

const Options = Type.Object(
  {
    format: Type.Optional(Type.Enum(['mp4', 'webm', 'mov'])),
    codec: Type.Optional(Type.Enum(['h264', 'h265', 'vp9', 'av1'])),
    width: Type.Optional(Dimension),
    height: Type.Optional(Dimension),
    fit: Type.Optional(Type.Enum(['contain', 'cover', 'fill'])),
    position: Type.Optional(PositionOption),
    background: Type.Optional(Hex),
    fps: Type.Optional(Type.Number({ minimum: 1, maximum: 60 })),
    quality: Type.Optional(QualityOption),
    bitrate: Type.Optional(Type.Integer({ minimum: 100_000, maximum: 100_000_000 })),
    preset: Type.Optional(Type.String({ maxLength: 16 })),
    start: Type.Optional(Seconds),
    end: Type.Optional(Seconds),
  },
  { additionalProperties: false },
);

function resolve(o: Static<typeof Options>): VideoOptions {
  const format = o.format ?? 'mp4';
  return {
    ...o,
    format,
    codec: o.codec ?? defaultCodecFor(format),
    fit: o.fit ?? 'contain',
    position: o.position ?? 'center',
    background: o.background ?? '#000000',
    quality: qualityOf(o.quality, DEFAULT_VIDEO_QUALITY),
  };
}

/** video: transcode (container, codec, size, fit, fps, quality, trim) with FFmpeg; audio kept when present. */
export const videoKind = defineKind({
  kind: 'video',
  options: Options,
  needsInputFile: true,
  problems(options) {
    const o = resolve(options);
    const out: ErrorDetail[] = trimProblems(o);
    if (!codecAllowedIn(o.format, o.codec))
      out.push({ field: 'codec', message: `${o.codec} cannot be stored in ${o.format}` });
    if (o.preset !== undefined && !presetAllowed(o.codec, o.preset))
      out.push({ field: 'preset', message: `is not a ${o.codec} preset` });
    return out;
  },
  async run(ctx, input) {
    const o = resolve(ctx.options);
    const { extension, mime } = videoOutputFormat(o.format);
    const { path: out, probe } = await transcode(ctx, input, o, extension, buildVideoArgs);
    return {
      files: [
        {
          path: out,
          kind: 'video',
          format: o.format,
          extension,
          mime: mimeWithCodecs(mime, probe),
          width: probe.width,
          height: probe.height,
          duration: probe.duration,
          probe,
        },
      ],
    };
  },
});
