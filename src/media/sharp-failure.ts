import { AppError } from '../errors.js';
import { failureLine } from './ffmpeg-run.js';
import { MediaTransformError } from './transform-error.js';

/** A sharp failure as the task's error: over the pixel limit, or else the input's own fault. */
export function sharpFailure(err: unknown, what: string): Error {
  const message = err instanceof Error ? err.message : String(err);
  if (/exceeds pixel limit/i.test(message)) {
    return new AppError('media_limit_exceeded', 'the image is larger than the pixel limit', { cause: err });
  }
  return new MediaTransformError('transform_failed', `the image could not be ${what}: ${failureLine(message)}`, {
    cause: err,
  });
}
