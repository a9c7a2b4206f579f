import fs from 'node:fs/promises';
import path from 'node:path';
import { Type } from 'typebox';
import { buildStoryboard, storyboardVtt } from '../media/index.js';
import { deliveryUrl } from '../services/representations.js';
import type { KindProcessor } from './types.js';

const Options = Type.Object({
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  interval: Type.Optional(Type.Number({ minimum: 0.1, maximum: 3600 })),
  width: Type.Optional(Type.Integer({ minimum: 16, maximum: 640 })),
  columns: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
  format: Type.Optional(Type.Union([Type.Literal('jpeg'), Type.Literal('webp')])),
}, { additionalProperties: false });

/**
 * thumbnails: a storyboard for video players — one sprite sheet of frames and a WebVTT
 * track whose cues point into it with #xywh=. The VTT is the task's output; the sprite
 * is a second file of the media, named after the task so its URL is known up front.
 */
export const thumbnailsKind: KindProcessor = {
  kind: 'thumbnails',
  options: Options,
  policy: { maxAttempts: 3, backoffMs: 5_000, timeoutMs: 3600_000 },
  needsInputFile: true,
  async run(ctx, input) {
    const raw = ctx.options as { count?: number; interval?: number; width?: number; columns?: number; format?: 'jpeg' | 'webp' };
    const format = raw.format ?? 'jpeg';
    const board = await buildStoryboard(input!.path, ctx.workDir, { ...raw, format }, input!.probe, {
      timeoutMs: this.policy.timeoutMs, signal: ctx.signal, onProgress: ctx.progress,
    }, ctx.deps.config.limits);
    const extension = format === 'jpeg' ? 'jpg' : 'webp';
    const spriteName = `${ctx.task.id}-sprite.${extension}`;
    const folder = ctx.target.folder ?? input!.file.folder;
    const spriteUrl = deliveryUrl(ctx.deps.config.publicUrl, ctx.task.project_id, folder, spriteName);
    const vttPath = path.join(ctx.workDir, 'thumbnails.vtt');
    await fs.writeFile(vttPath, storyboardVtt(board.tiles, spriteUrl));
    const ref = ctx.target.ref ?? 'thumbnails';
    return {
      files: [
        { path: vttPath, kind: 'thumbnails', format: 'vtt', extension: 'vtt', mime: 'text/vtt', duration: input!.probe.duration, ref, filename: `${ctx.task.id}-thumbnails.vtt` },
        { path: board.spritePath, kind: 'image', format, extension, mime: board.mime, width: board.spriteWidth, height: board.spriteHeight, ref: `${ref}_sprite`, filename: spriteName },
      ],
    };
  },
};
