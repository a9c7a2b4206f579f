import path from 'node:path';
import { Type } from 'typebox';
import type { ErrorDetail } from '../errors.js';
import {
  DEFAULT_VIDEO_QUALITY, buildVideoArgs, checkOutputCap, codecAllowedIn, defaultCodecFor, expectedDuration, presetAllowed, probeFile, runFfmpeg, videoOutputFormat,
  type VideoCodec, type VideoFormat, type VideoOptions,
} from '../media/index.js';
import { Dimension, Hex, PositionOption, QualityOption, Seconds, qualityOf, trimProblems } from './common-options.js';
import { mimeWithCodecs } from './output-facts.js';
import type { KindProcessor } from './types.js';

const Options = Type.Object({
  format: Type.Optional(Type.Union([Type.Literal('mp4'), Type.Literal('webm'), Type.Literal('mov')])),
  codec: Type.Optional(Type.Union([Type.Literal('h264'), Type.Literal('h265'), Type.Literal('vp9'), Type.Literal('av1')])),
  width: Type.Optional(Dimension),
  height: Type.Optional(Dimension),
  fit: Type.Optional(Type.Union([Type.Literal('contain'), Type.Literal('cover'), Type.Literal('fill')])),
  position: Type.Optional(PositionOption),
  background: Type.Optional(Hex),
  fps: Type.Optional(Type.Number({ minimum: 1, maximum: 60 })),
  quality: Type.Optional(QualityOption),
  bitrate: Type.Optional(Type.Integer({ minimum: 100_000, maximum: 100_000_000 })),
  preset: Type.Optional(Type.String({ maxLength: 16 })),
  start: Type.Optional(Seconds),
  end: Type.Optional(Seconds),
}, { additionalProperties: false });

type Raw = { format?: VideoFormat; codec?: VideoCodec; preset?: string; start?: number; end?: number } & Record<string, unknown>;

function resolve(raw: Raw): VideoOptions {
  const format = raw.format ?? 'mp4';
  return {
    format,
    codec: raw.codec ?? defaultCodecFor(format),
    width: raw.width as number | undefined,
    height: raw.height as number | undefined,
    fit: (raw.fit as VideoOptions['fit']) ?? 'contain',
    position: (raw.position as VideoOptions['position']) ?? 'center',
    background: (raw.background as string) ?? '#000000',
    fps: raw.fps as number | undefined,
    quality: qualityOf(raw.quality, DEFAULT_VIDEO_QUALITY),
    bitrate: raw.bitrate as number | undefined,
    preset: raw.preset,
    start: raw.start,
    end: raw.end,
  };
}

/** video: transcode (container, codec, size, fit, fps, quality, trim) with FFmpeg; audio kept when present. */
export const videoKind: KindProcessor = {
  kind: 'video',
  options: Options,
  policy: { maxAttempts: 3, backoffMs: 5_000, timeoutMs: 2 * 3600_000 },
  needsInputFile: true,
  problems(raw) {
    const o = resolve(raw as Raw);
    const out: ErrorDetail[] = trimProblems(o);
    if (!codecAllowedIn(o.format, o.codec)) out.push({ field: 'codec', message: `${o.codec} cannot be stored in ${o.format}` });
    if (o.preset !== undefined && !presetAllowed(o.codec, o.preset)) out.push({ field: 'preset', message: `is not a ${o.codec} preset` });
    return out;
  },
  async run(ctx, input) {
    const o = resolve(ctx.options as Raw);
    const { extension, mime } = videoOutputFormat(o.format);
    const out = path.join(ctx.workDir, `output.${extension}`);
    const limits = ctx.deps.config.limits;
    await runFfmpeg(buildVideoArgs(input!.path, out, o, input!.probe, limits), {
      timeoutMs: this.policy.timeoutMs, signal: ctx.signal, expectedDurationSeconds: expectedDuration(o, input!.probe), onProgress: ctx.progress,
    });
    const probe = await probeFile(out, { maxPixels: Number.MAX_SAFE_INTEGER, maxDurationSeconds: Number.MAX_SAFE_INTEGER }, { signal: ctx.signal, verifyDuration: false });
    // Output cut at the duration limit although the source should have ended before: refuse it.
    checkOutputCap(probe.duration, o, input!.probe, limits);
    return { files: [{ path: out, kind: 'video', format: o.format, extension, mime: mimeWithCodecs(mime, probe), width: probe.width, height: probe.height, duration: probe.duration, probe }] };
  },
};
