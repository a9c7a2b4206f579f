// Turns undici / socket / TLS failures into catalogue errors whose public message names the
// URL and a short reason (never a stack or an internal address).
import { AppError, isAppError } from '../errors.js';
import type { UrlPolicy } from './address-policy.js';
import { displayUrl } from './url-check.js';

export interface FetchSignals {
  /** The client's overall deadline (AbortSignal.timeout). */
  deadline: AbortSignal;
  /** The caller's own signal, if any. */
  caller?: AbortSignal;
  /** What undici sees: deadline or caller, whichever aborts first. */
  combined: AbortSignal;
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed while sending',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'name resolution failed temporarily',
  UND_ERR_SOCKET: 'the connection closed unexpectedly',
  UND_ERR_CLOSED: 'the connection closed unexpectedly',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'the body did not match its Content-Length',
  HPE_INVALID_CONSTANT: 'the response is not valid HTTP',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the TLS certificate does not match the host name',
  CERT_HAS_EXPIRED: 'the TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'the TLS certificate chain is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the TLS certificate could not be verified',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the TLS certificate issuer is unknown',
};

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Maps a failure while fetching `url`. The caller's own abort is returned untouched (it is
 * a cancellation, not a source problem); everything else becomes an AppError.
 */
export function toFetchError(err: unknown, url: URL, sig: FetchSignals, policy: UrlPolicy): unknown {
  if (isAppError(err)) return err;
  const where = displayUrl(url);
  if (sig.deadline.aborted) {
    return new AppError('source_timeout', `fetching ${where} took longer than ${policy.totalTimeoutMs} ms`, {
      cause: err,
    });
  }
  if (sig.caller?.aborted) return sig.caller.reason ?? err;

  const code = errorCode(err) ?? errorCode((err as { cause?: unknown } | null)?.cause);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new AppError('source_timeout', `connecting to ${url.host} timed out after ${policy.connectTimeoutMs} ms`, {
        cause: err,
      });
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new AppError('source_timeout', `${where} sent no response within ${policy.idleTimeoutMs} ms`, {
        cause: err,
      });
    case 'UND_ERR_BODY_TIMEOUT':
      return new AppError('source_timeout', `${where} stopped sending data for ${policy.idleTimeoutMs} ms`, {
        cause: err,
      });
    case 'UND_ERR_INVALID_ARG':
      return new AppError('bad_request', `cannot send this request to ${where}: ${(err as Error).message}`, {
        cause: err,
      });
  }
  const reason =
    (code && REASONS[code]) ??
    (code?.startsWith('ERR_TLS') || code?.includes('CERT')
      ? 'TLS handshake failed'
      : code
        ? `network error (${code})`
        : 'network error');
  return new AppError('source_unreachable', `could not fetch ${where}: ${reason}`, { cause: err });
}
