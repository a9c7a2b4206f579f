import path from 'node:path';
import { Type } from 'typebox';
import {
  DEFAULT_IMAGE_QUALITY, MediaTransformError, defaultFrameTime, frameLimitError, grabVideoFrame, imageOutputFormat, transformImage, type ImageFormat, type ImageOptions,
} from '../media/index.js';
import { Dimension, Hex, PositionOption, QualityOption, Seconds, qualityOf } from './common-options.js';
import type { KindProcessor } from './types.js';

const FORMATS = ['jpeg', 'png', 'webp', 'avif', 'gif'] as const;

const Options = Type.Object({
  width: Type.Optional(Dimension),
  height: Type.Optional(Dimension),
  fit: Type.Optional(Type.Union(['contain', 'cover', 'fill', 'inside', 'outside'].map((f) => Type.Literal(f)))),
  position: Type.Optional(PositionOption),
  background: Type.Optional(Hex),
  format: Type.Optional(Type.Union([...FORMATS, 'jpg'].map((f) => Type.Literal(f)))),
  quality: Type.Optional(QualityOption),
  /** For video inputs: the frame time in seconds. */
  start: Type.Optional(Seconds),
}, { additionalProperties: false });

/** image: resize/convert an image, or a frame of a video (poster), with sharp. */
export const imageKind: KindProcessor = {
  kind: 'image',
  options: Options,
  policy: { maxAttempts: 3, backoffMs: 2_000, timeoutMs: 10 * 60_000 },
  needsInputFile: true,
  check(_options, input) {
    if (input.probe.kind === 'audio') throw new MediaTransformError('invalid_for_input', 'an image task needs an image or a video, and this file is audio');
  },
  async run(ctx, input) {
    const raw = ctx.options as Record<string, unknown>;
    const fromVideo = input!.probe.kind === 'video';
    // Probes stored before the frame limit (or under a higher one) are held to it here.
    const { maxFrames } = ctx.deps.config.limits;
    if ((input!.probe.frames ?? 1) > maxFrames) throw frameLimitError(input!.probe.frames ?? 1, maxFrames);
    let source = input!.path;
    if (fromVideo) {
      source = path.join(ctx.workDir, 'frame.png');
      const at = (raw.start as number | undefined) ?? defaultFrameTime(input!.probe.duration);
      await grabVideoFrame(input!.path, at, source, { timeoutMs: this.policy.timeoutMs, signal: ctx.signal }, ctx.deps.config.limits);
      ctx.progress(50);
    }
    const requested = raw.format === 'jpg' ? 'jpeg' : (raw.format as ImageFormat | undefined);
    const inputFormat = (FORMATS as readonly string[]).includes(input!.probe.format) ? (input!.probe.format as ImageFormat) : 'jpeg';
    const format = requested ?? (fromVideo ? 'jpeg' : inputFormat);
    const opts: ImageOptions = {
      width: raw.width as number | undefined,
      height: raw.height as number | undefined,
      fit: (raw.fit as ImageOptions['fit']) ?? 'fill',
      position: (raw.position as ImageOptions['position']) ?? 'center',
      background: (raw.background as string | undefined) ?? (format === 'jpeg' ? '#000000' : '#00000000'),
      format,
      quality: qualityOf(raw.quality, DEFAULT_IMAGE_QUALITY),
    };
    // With one dimension only, the other follows the aspect ratio rather than stretching.
    if ((opts.width === undefined) !== (opts.height === undefined) && raw.fit === undefined) opts.fit = 'inside';
    const { extension } = imageOutputFormat(format);
    const out = path.join(ctx.workDir, `output.${extension}`);
    const result = await transformImage(source, out, opts, {
      maxPixels: ctx.deps.config.limits.maxPixels, animated: !fromVideo && (input!.probe.frames ?? 1) > 1, timeoutMs: this.policy.timeoutMs, signal: ctx.signal,
    });
    return { files: [{ path: out, kind: 'image', format: result.format, extension, mime: result.mime, width: result.width, height: result.height }] };
  },
};
