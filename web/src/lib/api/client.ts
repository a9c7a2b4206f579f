import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';
import { isRecord } from '../guards';

// The app's only way to the API: an openapi-fetch client typed from schema.d.ts (generated from
// /openapi.json, `npm run web:schema`). It asks for the envelope generation explicitly (the
// project's default may be the bare one), names the current project (X-Mediad-Project) and sends
// the session's CSRF token on writes. A failed answer becomes an ApiError (code, message, what to do).

/** The envelope generation the types describe. */
export const API_VERSION = '2025-07-01';

const state: { project: string | null; csrf: string | null } = { project: null, csrf: null };

/** The project every request acts on (from the URL: /app/p/:projectId/…). */
export function setCurrentProject(id: string | null): void {
  state.project = id;
}

/** The session's CSRF token (from GET /auth/session, POST /auth/sign-in or /auth/setup). */
export function setCsrfToken(token: string | null): void {
  state.csrf = token;
}

export interface ErrorDetail {
  field: string;
  message: string;
}

const HINTS: Record<string, string> = {
  unauthorized: 'Your session has ended: sign in again.',
  invalid_credentials: 'Check the email and password.',
  insufficient_role: 'Your role in this organisation does not allow this; ask an owner or admin.',
  insufficient_scope: 'This key lacks the scope for it; use a key with more access.',
  csrf_failed: 'Reload the page and try again.',
  rate_limited: 'Too many attempts: wait a moment and try again.',
  validation_failed: 'Correct the highlighted fields.',
  not_found: 'It may have been deleted, or it belongs to another project.',
  conflict: 'Its state changed meanwhile: reload and try again.',
  project_required: 'Choose a project first.',
  too_many_tasks: 'The project has too many pending tasks: wait for some to finish.',
  internal_error: 'Something went wrong on the server; try again, and check the server log if it persists.',
  service_unavailable: 'The server is not ready; try again shortly.',
};

/** An answer with the API's error envelope, or no answer at all (status 0). */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly details: ErrorDetail[];
  /** Seconds to wait, from Retry-After (429). */
  readonly retryAfter: number | null;
  readonly requestId: string | null;

  constructor(init: {
    code: string;
    message: string;
    status: number;
    details?: ErrorDetail[];
    retryAfter?: number | null;
    requestId?: string | null;
  }) {
    super(init.message);
    this.name = 'ApiError';
    this.code = init.code;
    this.status = init.status;
    this.details = init.details ?? [];
    this.retryAfter = init.retryAfter ?? null;
    this.requestId = init.requestId ?? null;
  }

  /** What the person can do about it. */
  get hint(): string {
    if (this.code === 'rate_limited' && this.retryAfter !== null)
      return `Too many attempts: try again in ${this.retryAfter} s.`;
    return HINTS[this.code] ?? 'Try again; if it persists, the request id helps find it in the server log.';
  }
}

/** Reads the error envelope ({error: {code, message, details}}) or the bare error of an answer. */
async function toApiError(response: Response): Promise<ApiError> {
  const body: unknown = await response
    .clone()
    .json()
    .catch(() => null);
  const err = isRecord(body) ? (isRecord(body.error) ? body.error : body) : {};
  const details = Array.isArray(err.details)
    ? err.details.flatMap((d: unknown) =>
        isRecord(d) && typeof d.field === 'string' && typeof d.message === 'string'
          ? [{ field: d.field, message: d.message }]
          : [],
      )
    : [];
  const retry = Number(response.headers.get('retry-after'));
  return new ApiError({
    code: typeof err.code === 'string' ? err.code : `http_${response.status}`,
    message: typeof err.message === 'string' ? err.message : `${response.status} ${response.statusText}`,
    status: response.status,
    details,
    retryAfter: Number.isFinite(retry) && retry > 0 ? retry : null,
    requestId: response.headers.get('x-request-id'),
  });
}

const UNSAFE = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

const middleware: Middleware = {
  onRequest({ request }) {
    request.headers.set('Accept-Version', API_VERSION);
    if (state.project) request.headers.set('X-Mediad-Project', state.project);
    if (state.csrf && UNSAFE.has(request.method)) request.headers.set('X-CSRF-Token', state.csrf);
    return request;
  },
  async onResponse({ response }) {
    if (!response.ok) throw await toApiError(response);
    return response;
  },
  onError({ error }) {
    if (error instanceof ApiError) return error;
    return new ApiError({
      code: 'network_error',
      message: `The server could not be reached (${error instanceof Error ? error.message : String(error)}).`,
      status: 0,
    });
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin' });
api.use(middleware);

/**
 * The data of an answer. The middleware throws on any failed answer, so a missing `data` here
 * means the answer had no body at all.
 */
export function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined)
    throw new ApiError({ code: 'empty_answer', message: 'The server sent no body.', status: result.response.status });
  return result.data;
}

/** Any thrown value as an ApiError, for display. */
export function asApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return new ApiError({ code: 'client_error', message: err instanceof Error ? err.message : String(err), status: 0 });
}

// Resumable uploads (issue 25): tus-js-client sends its own requests (XMLHttpRequest), with the
// same project and CSRF headers as this client's.
/** The headers that make a request the signed-in user's, on the current project. */
export function sessionHeaders(): Record<string, string> {
  const headers: Record<string, string> = { 'Accept-Version': API_VERSION };
  if (state.project) headers['X-Mediad-Project'] = state.project;
  if (state.csrf) headers['X-CSRF-Token'] = state.csrf;
  return headers;
}
