import path from 'node:path';
import { Type, type Static } from 'typebox';
import type { ErrorDetail } from '../errors.js';
import {
  DEFAULT_VIDEO_QUALITY,
  buildVideoArgs,
  checkOutputCap,
  codecAllowedIn,
  defaultCodecFor,
  expectedDuration,
  presetAllowed,
  probeFile,
  runFfmpeg,
  videoOutputFormat,
  type VideoOptions,
} from '../media/index.js';
import { Dimension, Hex, PositionOption, QualityOption, Seconds, qualityOf, trimProblems } from './common-options.js';
import { mimeWithCodecs } from './output-facts.js';
import { defineKind } from './define.js';

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
    const out = path.join(ctx.workDir, `output.${extension}`);
    const limits = ctx.config.limits;
    await runFfmpeg(buildVideoArgs(input.path, out, o, input.probe, limits), {
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
      expectedDurationSeconds: expectedDuration(o, input.probe),
      onProgress: ctx.progress,
    });
    const probe = await probeFile(
      out,
      { maxPixels: Number.MAX_SAFE_INTEGER, maxDurationSeconds: Number.MAX_SAFE_INTEGER },
      { signal: ctx.signal, verifyDuration: false },
    );
    // Output cut at the duration limit although the source should have ended before: refuse it.
    checkOutputCap(probe.duration, o, input.probe, limits);
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
