// The one catalogue of error codes. Every failure the API reports carries one of these
// codes; the HTTP status comes from here, never from the throw site.
export const ERROR_CATALOGUE = {
  bad_request: 400,
  project_required: 400,
  invalid_json: 400,
  validation_failed: 400,
  idempotency_key_invalid: 400,
  unsupported_version: 400,
  https_required: 400,
  unauthorized: 401,
  invalid_credentials: 401,
  forbidden: 403,
  insufficient_scope: 403,
  insufficient_role: 403,
  csrf_failed: 403,
  signature_invalid: 403,
  signature_expired: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  file_conflict: 409,
  idempotency_request_in_progress: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  idempotency_key_reused: 422,
  source_unreachable: 422,
  source_refused: 422,
  source_rejected: 422,
  source_too_large: 422,
  source_timeout: 422,
  media_unsupported: 422,
  media_limit_exceeded: 422,
  kind_not_supported: 422,
  /** A task kind cannot run with the engines this mediad has (no provider configured, a local engine missing). */
  engine_unavailable: 422,
  rate_limited: 429,
  too_many_tasks: 429,
  headers_too_large: 431,
  internal_error: 500,
  /** An AI provider failed a task's call (time-out, 5xx, 429, an answer off the schema); tasks only. */
  provider_failed: 502,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface ErrorDetail {
  /** Where the problem is: a body field (`url`), a query parameter (`query.limit`) or a header. */
  field: string;
  message: string;
}

/** An error the caller may see: `message` is public, `cause` stays in the logs. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: ErrorDetail[];
  readonly headers?: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { details?: ErrorDetail[]; cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_CATALOGUE[code];
    this.details = opts.details;
    this.headers = opts.headers;
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
