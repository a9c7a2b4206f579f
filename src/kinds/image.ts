import path from 'node:path';
import { Type } from 'typebox';
import {
  DEFAULT_IMAGE_QUALITY,
  defaultFrameTime,
  frameLimitError,
  grabVideoFrame,
  imageOutputFormat,
  transformImage,
  type ImageFormat,
  type ImageOptions,
} from '../media/index.js';
import { Dimension, Hex, PositionOption, QualityOption, Seconds, qualityOf } from './common-options.js';
import { defineKind } from './define.js';

const FORMATS: ImageFormat[] = ['jpeg', 'png', 'webp', 'avif', 'gif'];
const isImageFormat = (f: string): f is ImageFormat => (FORMATS as string[]).includes(f);

const Options = Type.Object(
  {
    width: Type.Optional(Dimension),
    height: Type.Optional(Dimension),
    fit: Type.Optional(Type.Enum(['contain', 'cover', 'fill', 'inside', 'outside'])),
    position: Type.Optional(PositionOption),
    background: Type.Optional(Hex),
    format: Type.Optional(Type.Enum(['jpeg', 'png', 'webp', 'avif', 'gif', 'jpg'])),
    quality: Type.Optional(QualityOption),
    /** For video inputs: the frame time in seconds. */
    start: Type.Optional(Seconds),
  },
  { additionalProperties: false },
);

/** image: resize/convert an image, or a frame of a video (poster), with sharp. */
export const imageKind = defineKind({
  kind: 'image',
  options: Options,
  needsInputFile: true,
  inputKinds: ['image', 'video'],
  async run(ctx, input) {
    const o = ctx.options;
    const fromVideo = input.probe.kind === 'video';
    // Probes stored before the frame limit (or under a higher one) are held to it here.
    const { maxFrames } = ctx.config.limits;
    if ((input.probe.frames ?? 1) > maxFrames) throw frameLimitError(input.probe.frames ?? 1, maxFrames);
    let source = input.path;
    if (fromVideo) {
      source = path.join(ctx.workDir, 'frame.png');
      const at = o.start ?? defaultFrameTime(input.probe.duration);
      await grabVideoFrame(input.path, at, source, { timeoutMs: ctx.timeoutMs, signal: ctx.signal }, ctx.config.limits);
      ctx.progress(50);
    }
    const requested = o.format === 'jpg' ? 'jpeg' : o.format;
    const inputFormat = isImageFormat(input.probe.format) ? input.probe.format : 'jpeg';
    const format = requested ?? (fromVideo ? 'jpeg' : inputFormat);
    const opts: ImageOptions = {
      width: o.width,
      height: o.height,
      // With one dimension only, the other follows the aspect ratio rather than stretching.
      fit: o.fit ?? ((o.width === undefined) !== (o.height === undefined) ? 'inside' : 'fill'),
      position: o.position ?? 'center',
      background: o.background ?? (format === 'jpeg' ? '#000000' : '#00000000'),
      format,
      quality: qualityOf(o.quality, DEFAULT_IMAGE_QUALITY),
    };
    const { extension } = imageOutputFormat(format);
    const out = path.join(ctx.workDir, `output.${extension}`);
    const result = await transformImage(source, out, opts, {
      maxPixels: ctx.config.limits.maxPixels,
      animated: !fromVideo && (input.probe.frames ?? 1) > 1,
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
    });
    return {
      files: [
        {
          path: out,
          kind: 'image',
          format: result.format,
          extension,
          mime: result.mime,
          width: result.width,
          height: result.height,
        },
      ],
    };
  },
});
