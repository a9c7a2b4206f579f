// Failures of a transform that are about the caller's input, not about mediad. The engine maps
// the code to the task's error; src/errors.ts stays the only HTTP catalogue.

/** invalid_for_source: options the source cannot satisfy (a ladder rung above its height), known only from it. */
export type MediaTransformCode = 'no_audio_stream' | 'invalid_for_input' | 'invalid_for_source' | 'transform_failed';

export class MediaTransformError extends Error {
  /** The input is at fault: another attempt on it fails the same way. */
  readonly transient = false;

  constructor(
    readonly code: MediaTransformCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MediaTransformError';
  }
}

export function isMediaTransformError(err: unknown): err is MediaTransformError {
  return err instanceof MediaTransformError;
}
