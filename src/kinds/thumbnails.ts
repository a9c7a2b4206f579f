import fs from 'node:fs/promises';
import path from 'node:path';
import { Type } from 'typebox';
import { buildStoryboard, storyboardVtt } from '../media/index.js';
import { deliveryUrl } from '../shapes/files.js';
import { defineKind } from './define.js';

const Options = Type.Object(
  {
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    interval: Type.Optional(Type.Number({ minimum: 0.1, maximum: 3600 })),
    width: Type.Optional(Type.Integer({ minimum: 16, maximum: 640 })),
    columns: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
    format: Type.Optional(Type.Enum(['jpeg', 'webp'])),
  },
  { additionalProperties: false },
);

/**
 * thumbnails: a storyboard for video players — one sprite sheet of frames and a WebVTT
 * track whose cues point into it with #xywh=. The VTT is the task's output; the sprite
 * is a second file of the media, named after the task so its URL is known up front.
 */
export const thumbnailsKind = defineKind({
  kind: 'thumbnails',
  options: Options,
  needsInputFile: true,
  async run(ctx, input) {
    const format = ctx.options.format ?? 'jpeg';
    const board = await buildStoryboard(
      input.path,
      ctx.workDir,
      { ...ctx.options, format },
      input.probe,
      {
        timeoutMs: ctx.timeoutMs,
        signal: ctx.signal,
        onProgress: ctx.progress,
      },
      ctx.config.limits,
    );
    const extension = format === 'jpeg' ? 'jpg' : 'webp';
    const spriteName = `${ctx.task.id}-sprite.${extension}`;
    const folder = ctx.target.folder ?? input.file.folder;
    const spriteUrl = deliveryUrl(ctx.config.publicUrl, ctx.task.project_id, folder, spriteName);
    const vttPath = path.join(ctx.workDir, 'thumbnails.vtt');
    await fs.writeFile(vttPath, storyboardVtt(board.tiles, spriteUrl));
    const ref = ctx.target.ref ?? 'thumbnails';
    return {
      files: [
        {
          path: vttPath,
          kind: 'thumbnails',
          format: 'vtt',
          extension: 'vtt',
          mime: 'text/vtt',
          duration: input.probe.duration,
          ref,
          filename: `${ctx.task.id}-thumbnails.vtt`,
        },
        {
          path: board.spritePath,
          kind: 'image',
          format,
          extension,
          mime: board.mime,
          width: board.spriteWidth,
          height: board.spriteHeight,
          ref: `${ref}_sprite`,
          filename: spriteName,
        },
      ],
    };
  },
});
