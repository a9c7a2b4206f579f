import fs from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import {
  animatedPageAt,
  defaultFrameTime,
  grabVideoFrame,
  isMediaTransformError,
  renderImageUrl,
  type ImageUrlRender,
  type ImageUrlResult,
} from '../../media/index.js';
import { scratchPath } from './file-store.js';

// Computing one image-URL result: the source read in place when the store is on disk (downloaded
// to scratch space from S3), a video's frame with FFmpeg, an animation's frame by its delays, then
// one sharp pipeline (media/image-url-render.ts).

/** The columns of the source file a computation needs. */
export interface SourceFile {
  id: string;
  kind: string;
  format: string | null;
  width: number | null;
  height: number | null;
  duration: number | null;
  blob_key: string;
  probe: string | null;
}

export async function computeImage(
  deps: Pick<Deps, 'blobs' | 'tmpDir' | 'config'>,
  file: SourceFile,
  render: ImageUrlRender,
  time: number | undefined,
  frames: number,
): Promise<ImageUrlResult> {
  const cleanup: string[] = [];
  try {
    let input = deps.blobs.localPath(file.blob_key);
    if (input === null) {
      input = scratchPath(deps, 'image-url-src');
      cleanup.push(input);
      await pipeline(await deps.blobs.read(file.blob_key), createWriteStream(input));
    }
    const r = { ...render };
    if (file.kind === 'video') {
      const frame = scratchPath(deps, 'image-url-frame') + '.png';
      cleanup.push(frame);
      const at = time ?? defaultFrameTime(file.duration ?? undefined);
      try {
        await grabVideoFrame(input, at, frame, { timeoutMs: 60_000 }, deps.config.limits);
      } catch (err) {
        if (isMediaTransformError(err) && err.code === 'invalid_for_input')
          throw new AppError('invalid_for_source', `image option time: ${err.message}`, {
            details: [{ field: 'time', message: err.message }],
          });
        throw err;
      }
      input = frame;
    } else if (frames > 1 && time !== undefined) {
      const { page, duration } = await animatedPageAt(input, time, deps.config.limits.maxPixels);
      if (page < 0)
        throw new AppError(
          'invalid_for_source',
          `image option time: ${time} s is past the end of the animation (${duration} s)`,
          {
            details: [{ field: 'time', message: `past the end of the animation (${duration} s)` }],
          },
        );
      r.page = page;
    }
    return await renderImageUrl(input, r, { maxPixels: deps.config.limits.maxPixels, timeoutSeconds: 60 });
  } catch (err) {
    if (isMediaTransformError(err)) throw new AppError('media_unsupported', err.message, { cause: err });
    throw err;
  } finally {
    for (const p of cleanup) await fs.rm(p, { force: true });
  }
}
