import { ERROR_CATALOGUE, type ErrorCode } from '../../errors.js';

// What each error code means, for the API reference (a test holds it to the catalogue).
export const ERROR_MEANINGS: Record<ErrorCode, string> = {
  bad_request: 'The request is malformed (HTTP it cannot parse, a body that makes no sense here).',
  project_required: 'A request signed in with a session must name its project in X-Mediad-Project.',
  invalid_credentials: 'The email or the password is wrong (the same answer either way).',
  insufficient_scope: 'The API key’s scopes do not allow this; make a key with the scope the message names.',
  insufficient_role: 'Your role in the organisation does not allow this; ask an owner or admin.',
  csrf_failed: 'An unsafe request with a session came from another origin or without X-CSRF-Token.',
  password_sign_in_disabled:
    'Password sign-in is turned off here (MEDIAD_PASSWORD_SIGN_IN=false): sign in with the OpenID Connect provider.',
  invalid_json: 'The body is not valid JSON: bad syntax, not UTF-8, or nested more than 64 levels.',
  validation_failed: 'A field is missing, of the wrong type or out of range; `details` names each one.',
  idempotency_key_invalid: 'Idempotency-Key must be 16 to 32 printable characters.',
  unsupported_version: 'Accept-Version (or ACCEPT_VERSION) names no version of this API.',
  https_required: 'Plain HTTP was used; call the https:// address.',
  confirmation_required: 'A deletion needs `confirm` with the exact name of what is deleted.',
  last_owner: 'The change would leave the organisation without an owner; make someone else owner first.',
  invitation_used: 'The invitation was accepted already; sign in instead.',
  invitation_expired: 'The invitation link expired; ask for a new one.',
  invitation_revoked: 'The invitation was revoked; ask for a new one.',
  unauthorized: 'No API key, or one that is unknown, revoked, expired or paused.',
  forbidden: 'The project requires signed URLs to read this file.',
  signature_invalid: 'The signed URL does not match: altered, or signed for another method.',
  signature_expired: 'The signed URL expired; make a new one with POST /signatures.',
  not_found: 'No such resource in this project (another project’s ids are not found either).',
  method_not_allowed: 'The path exists but not with this method; `Allow` lists the ones it takes.',
  request_timeout: 'The request head or body arrived too slowly.',
  conflict: 'The resource is not in a state that allows this (cancelling a finished task).',
  file_conflict: 'A file already has that folder and filename.',
  idempotency_request_in_progress: 'A request with this Idempotency-Key is still running; retry after it ends.',
  payload_too_large: 'The body (or the fetched or uploaded file) is larger than allowed.',
  unsupported_media_type: 'The body is not JSON (send Content-Type: application/json).',
  range_not_satisfiable: 'The Range lies outside the file.',
  idempotency_key_reused: 'This Idempotency-Key was used with another request; use a new key.',
  source_unreachable: 'The source URL could not be reached, or answered 5xx.',
  source_refused: 'The source URL points at a private, loopback or link-local address, or is not http(s).',
  source_rejected: 'The source answered 4xx.',
  source_too_large: 'The source is larger than MEDIAD_MAX_FILE_BYTES.',
  source_timeout: 'The source stopped sending, or took longer than allowed.',
  invalid_for_source:
    'An image URL option the source cannot satisfy, such as a `time` past the end of the video (the detail names the option).',
  media_unsupported: 'The bytes are not media mediad can process (or their dimensions cannot be read).',
  media_limit_exceeded: 'The media is over a size, pixel, frame or duration limit; the message names it.',
  kind_not_supported: 'The task kind is not one of the kinds this mediad runs.',
  rate_limited: 'Too many requests with this key; wait for Retry-After.',
  too_many_tasks: 'The project has as many pending tasks as MEDIAD_MAX_PENDING_TASKS allows.',
  headers_too_large: 'The request line and headers are over 16 KiB.',
  internal_error: 'Something failed on the server; it is logged with the request id.',
  service_unavailable: 'The database or storage does not answer.',
  engine_unavailable:
    'The kind cannot run with the engines this mediad has (an AI provider not configured, a local engine not installed); the message says what to set or install.',
  provider_failed:
    'The AI provider timed out, answered an error, or answered off the requested schema (a task error; retried per the kind unless the refusal was final).',
  expectation_failed: 'The request has an Expect header other than 100-continue, which this server cannot meet.',
  http_version_not_supported:
    'The request line names an HTTP version other than 1.0 or 1.1; this server speaks HTTP/1.1 (over TLS).',
  secret_unavailable:
    'A secret option (an http header value) could not be opened with this process’s key: every mediad process needs the same MEDIAD_SECRET_KEY (a task error).',
  // Resumable uploads (issue 25).
  precondition_failed:
    'A tus request without `Tus-Resumable: 1.0.0` (or naming another version); `Tus-Version` lists ours.',
  upload_expired: 'The resumable upload expired before its last byte (MEDIAD_UPLOAD_EXPIRY_HOURS); start a new one.',
  checksum_mismatch: 'The chunk does not match its Upload-Checksum; it was not kept: send it again.',
};

/** The catalogue as a Markdown table: status, code, meaning. */
export function errorTable(): string {
  const rows = (Object.keys(ERROR_CATALOGUE) as ErrorCode[])
    .sort((a, b) => ERROR_CATALOGUE[a] - ERROR_CATALOGUE[b] || a.localeCompare(b))
    .map((code) => `| ${ERROR_CATALOGUE[code]} | \`${code}\` | ${ERROR_MEANINGS[code]} |`);
  return ['| Status | Code | Meaning |', '|---|---|---|', ...rows].join('\n');
}
