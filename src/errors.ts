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
  /** A deletion without the typed confirmation: `confirm` must be the exact name. */
  confirmation_required: 400,
  unauthorized: 401,
  invalid_credentials: 401,
  forbidden: 403,
  insufficient_scope: 403,
  insufficient_role: 403,
  csrf_failed: 403,
  /** MEDIAD_PASSWORD_SIGN_IN=false: people sign in with the OpenID Connect provider. */
  password_sign_in_disabled: 403,
  signature_invalid: 403,
  signature_expired: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  file_conflict: 409,
  idempotency_request_in_progress: 409,
  /** The change would leave an organisation without an owner. */
  last_owner: 409,
  invitation_used: 409,
  invitation_expired: 410,
  invitation_revoked: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  /** An Expect header other than 100-continue (RFC 9110 10.1.1). */
  expectation_failed: 417,
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
  /** An image URL option the source cannot satisfy (a `time` past the video's end). */
  invalid_for_source: 422,
  rate_limited: 429,
  too_many_tasks: 429,
  headers_too_large: 431,
  internal_error: 500,
  /** An AI provider failed a task's call (time-out, 5xx, 429, an answer off the schema); tasks only. */
  provider_failed: 502,
  /** A secret option (an http header value) could not be opened with this process's keys (MEDIAD_SECRET_KEY); tasks only. */
  secret_unavailable: 500,
  service_unavailable: 503,
  /** A request line naming an HTTP version other than 1.x on this HTTP/1.1 server. */
  http_version_not_supported: 505,
  // Resumable uploads (tus 1.0 at /uploads/tus, issue 25).
  /** A tus request without Tus-Resumable, or naming a version other than 1.0.0 (the answer carries Tus-Version). */
  precondition_failed: 412,
  /** A tus upload that was not finished before it expired (MEDIAD_UPLOAD_EXPIRY_HOURS). */
  upload_expired: 410,
  /** A tus PATCH whose Upload-Checksum does not match its body: the chunk was not kept. */
  checksum_mismatch: 460,
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/**
 * The codes of failures that may pass on another attempt (a source that did not answer in time, a
 * service briefly unavailable, our own fault). A task that fails with one is retried; the rest
 * (the input or the options are at fault) fail at once. A throw site may say otherwise.
 */
const TRANSIENT_ERRORS: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'source_unreachable',
  'source_timeout',
  'service_unavailable',
  'internal_error',
]);

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
  /** Whether another attempt may pass (the retry policy reads it); from the code unless given. */
  readonly transient: boolean;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { details?: ErrorDetail[]; cause?: unknown; headers?: Record<string, string>; transient?: boolean } = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_CATALOGUE[code];
    this.details = opts.details;
    this.headers = opts.headers;
    this.transient = opts.transient ?? TRANSIENT_ERRORS.has(code);
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

/**
 * Why a sign-in with the OpenID Connect provider failed. The callback is a browser navigation, so
 * these are not error envelopes: the browser is sent to /app/sign-in?error=<code>, and the sign-in
 * page says what the message here says.
 */
export const OIDC_SIGN_IN_ERRORS = {
  oidc_not_configured: 'Sign-in with an OpenID Connect provider is not set up on this server.',
  oidc_provider_unreachable: 'The sign-in provider could not be reached; try again later.',
  oidc_state_missing: 'The sign-in took too long or was started in another browser; start again.',
  oidc_state_mismatch: 'The answer of the sign-in provider does not belong to this sign-in; start again.',
  oidc_denied: 'The sign-in provider did not sign you in.',
  oidc_invalid_response: 'The sign-in provider answered something that could not be verified.',
  oidc_email_missing: 'The sign-in provider did not share an email address.',
  oidc_email_unverified: 'The sign-in provider has not verified your email address.',
  oidc_unknown_user: 'No account has this email address; ask an administrator to add you.',
  oidc_account_disabled: 'This account is disabled.',
  oidc_failed: 'The sign-in failed; try again, and tell an administrator if it goes on.',
} as const;

export type OidcSignInError = keyof typeof OIDC_SIGN_IN_ERRORS;
