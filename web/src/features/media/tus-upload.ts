import { DetailedError, Upload } from 'tus-js-client';
import { ApiError, sessionHeaders } from '../../lib/api/client';
import { isRecord } from '../../lib/guards';

// One file sent with tus (resumable: docs/uploads.md) to /uploads/tus: the session's headers on
// every request, chunks of CHUNK_BYTES, retries after a dropped connection, and the upload's URL
// kept in localStorage by tus-js-client (keyed by the file's name, type, size and date), so the
// same file dropped again after a reload resumes where it stopped.

export const CHUNK_BYTES = 64 * 1024 * 1024;
export const FOLDER = 'uploads';

export interface TusCallbacks {
  onProgress(sent: number, total: number): void;
  onSuccess(fileId: string): void;
  onError(err: ApiError): void;
}

/** The error a failed tus request answered (the API's error envelope), as an ApiError. */
function apiErrorOf(err: Error): ApiError {
  if (err instanceof DetailedError && err.originalResponse) {
    const status = err.originalResponse.getStatus();
    let body: unknown;
    try {
      body = JSON.parse(err.originalResponse.getBody());
    } catch {
      body = null;
    }
    const e = isRecord(body) ? (isRecord(body.error) ? body.error : body) : {};
    return new ApiError({
      code: typeof e.code === 'string' ? e.code : `http_${status}`,
      message: typeof e.message === 'string' ? e.message : `The upload failed (${status})`,
      status,
    });
  }
  return new ApiError({ code: 'network_error', message: 'The upload was cut off (network error).', status: 0 });
}

export interface TusUpload {
  /** Starts, or resumes a paused upload (or one a previous page left, found by the file). */
  start(): Promise<void>;
  pause(): Promise<void>;
}

export function tusUpload(file: File, filename: string, cb: TusCallbacks): TusUpload {
  const upload = new Upload(file, {
    endpoint: `${location.origin}/uploads/tus`,
    chunkSize: CHUNK_BYTES,
    retryDelays: [0, 1000, 3000, 5000],
    metadata: { filename, filetype: file.type, folder: FOLDER },
    removeFingerprintOnSuccess: true,
    // The CSRF token and project are read at each request (they may change while a file uploads).
    onBeforeRequest: (req) => {
      for (const [name, value] of Object.entries(sessionHeaders())) req.setHeader(name, value);
    },
    // A refusal (not media, over a limit, a taken name) will not pass on a retry; a dropped connection may.
    onShouldRetry: (err) => {
      const status = err.originalResponse?.getStatus() ?? 0;
      if (err.originalRequest?.getMethod() === 'POST') return status === 0 || status >= 500;
      return status === 0 || status === 409 || status === 423 || status >= 500;
    },
    onProgress: cb.onProgress,
    onSuccess: ({ lastResponse }) => {
      const id = lastResponse.getHeader('Mediad-File-Id');
      if (id) cb.onSuccess(id);
      else
        cb.onError(new ApiError({ code: 'bad_answer', message: 'The server did not name the new file.', status: 0 }));
    },
    onError: (err) => cb.onError(apiErrorOf(err)),
  });
  let resumedFromStorage = false;
  return {
    async start() {
      if (!resumedFromStorage && !upload.url) {
        resumedFromStorage = true;
        const previous = await upload.findPreviousUploads();
        if (previous[0]) upload.resumeFromPreviousUpload(previous[0]);
      }
      upload.start();
    },
    pause: () => upload.abort(),
  };
}
