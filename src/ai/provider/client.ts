// Calls to an OpenAI-compatible provider through the injected outbound client (mediad's
// SSRF-guarded one). Every failure becomes a ProviderError with the provider's status and a
// transient flag; the API key is sent only in the Authorization header and redacted everywhere else.
import { STATUS_CODES } from 'node:http';
import { isAppError } from '../../errors.js';
import type { GuardedRequestInit, GuardedResponse } from '../../net/index.js';
import { ProviderError, redactSecret } from '../errors.js';

/** The shape of `Outbound['request']` (src/deps.ts). */
export type OutboundRequest = (url: string, init?: GuardedRequestInit) => Promise<GuardedResponse>;

export interface ProviderEndpoint {
  /** Base URL including the API version path, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>`; never logged, never in a message. */
  apiKey?: string;
  request: OutboundRequest;
  /** Per request, default 120 s. */
  timeoutMs?: number;
  /** Largest response body read, default 16 MiB. */
  maxResponseBytes?: number;
}

export type ProviderBody = { json: unknown } | { form: FormData };

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_RESPONSE = 16 * 1024 * 1024;
const ERROR_BODY_BYTES = 64 * 1024;

/** `base` + `/path`, keeping any path the base has (`…/v1` + `/models` → `…/v1/models`). */
export function endpointUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/** host + path only: no credentials, no query (either may carry a key). */
function where(method: string, url: string): string {
  try {
    const u = new URL(url);
    return `${method} ${u.host}${u.pathname}`;
  } catch {
    return method;
  }
}

/** Retry-After as seconds or an HTTP date, in ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

async function readBody(res: GuardedResponse, limit: number): Promise<{ text: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    if (size > limit) {
      chunks.push(buf.subarray(0, buf.length - (size - limit)));
      res.body.destroy();
      return { text: Buffer.concat(chunks).toString('utf8'), truncated: true };
    }
    chunks.push(buf);
  }
  return { text: Buffer.concat(chunks).toString('utf8'), truncated: false };
}

/** The provider's own explanation from an OpenAI-style error body, shortened. */
function errorDetail(text: string): string {
  let detail = text;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && 'error' in parsed) {
      const e = parsed.error;
      if (typeof e === 'string') detail = e;
      else if (e && typeof e === 'object' && 'message' in e && typeof e.message === 'string') detail = e.message;
    } else if (parsed && typeof parsed === 'object' && 'message' in parsed && typeof parsed.message === 'string') {
      detail = parsed.message;
    }
  } catch {
    // not JSON: use the text
  }
  const flat = detail.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

const TRANSIENT_STATUS = new Set([408, 409, 425, 429]);

/** One request; resolves with the parsed JSON of a 2xx answer. */
export async function providerRequest(
  ep: ProviderEndpoint,
  method: 'GET' | 'POST',
  path: string,
  body?: ProviderBody,
  signal?: AbortSignal,
): Promise<unknown> {
  const url = endpointUrl(ep.baseUrl, path);
  const at = where(method, url);
  // AbortSignal.timeout takes whole milliseconds only (a limit grown from an audio's length is not).
  const timeoutMs = Math.ceil(ep.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const deadline = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
  const redact = (s: string) => redactSecret(s, ep.apiKey);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (ep.apiKey) headers.authorization = `Bearer ${ep.apiKey}`;

  let payload: string | Buffer | undefined;
  if (body && 'json' in body) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body.json);
  } else if (body) {
    // The platform's own multipart encoder (undici) writes the boundary and the parts.
    const encoded = new Response(body.form);
    headers['content-type'] = encoded.headers.get('content-type') ?? 'multipart/form-data';
    payload = Buffer.from(await encoded.arrayBuffer());
  }

  let res: GuardedResponse;
  let text: string;
  try {
    res = await ep.request(url, { method, headers, body: payload, signal: combined });
    const ok = res.status >= 200 && res.status < 300;
    const read = await readBody(res, ok ? (ep.maxResponseBytes ?? DEFAULT_MAX_RESPONSE) : ERROR_BODY_BYTES);
    if (ok && read.truncated) {
      throw new ProviderError(
        `the provider's answer to ${at} is larger than ${ep.maxResponseBytes ?? DEFAULT_MAX_RESPONSE} bytes`,
        false,
        res.status,
      );
    }
    text = read.text;
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    // The caller's cancel is not a provider failure: hand back its reason untouched.
    if (signal?.aborted) throw signal.reason;
    if (deadline.aborted)
      throw new ProviderError(
        `the provider did not answer ${at} within ${Math.round(timeoutMs / 1000)} s`,
        true,
        null,
        undefined,
        { cause: err },
      );
    if (isAppError(err)) {
      // source_refused / bad_request are configuration problems a retry will not fix.
      const transient = err.code === 'source_timeout' || err.code === 'source_unreachable';
      const hint =
        err.code === 'source_refused'
          ? ' (for a provider on a private address, allow its host in MEDIAD_ALLOWED_URL_HOSTS)'
          : '';
      throw new ProviderError(
        redact(`the provider could not be reached for ${at}: ${err.message}${hint}`),
        transient,
        null,
        undefined,
        { cause: err },
      );
    }
    const message = err instanceof Error ? err.message : String(err);
    throw new ProviderError(redact(`the request ${at} failed: ${message}`), true, null, undefined, { cause: err });
  }

  if (res.status < 200 || res.status > 299) {
    const reason = STATUS_CODES[res.status] ?? '';
    const detail = errorDetail(text);
    const transient = res.status >= 500 || TRANSIENT_STATUS.has(res.status);
    const retryAfter = parseRetryAfter(res.headers['retry-after']);
    const message =
      `the provider answered ${res.status}${reason ? ` ${reason}` : ''} to ${at}${detail ? `: ${detail}` : ''}` +
      (res.status === 401 || res.status === 403 ? ' (check the provider API key)' : '');
    throw new ProviderError(redact(message), transient, res.status, retryAfter);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ProviderError(
      `the provider answered ${res.status} to ${at} with malformed JSON (${text.length} bytes)`,
      true,
      res.status,
      undefined,
      { cause: err },
    );
  }
}
