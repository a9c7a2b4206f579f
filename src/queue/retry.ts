import { isAppError } from '../errors.js';
import type { RetryPolicy } from './policies.js';

// Which failures are worth another attempt. A source that timed out or did not answer,
// a lost lease or an FFmpeg run that hit its time limit may pass next time; an
// undecodable file or options that do not fit the input never will.
const TRANSIENT_CODES = new Set(['source_unreachable', 'source_timeout', 'service_unavailable', 'internal_error']);

export interface TaskFailure {
  code: string;
  message: string;
  transient: boolean;
}

export function classifyFailure(err: unknown): TaskFailure {
  if (isAppError(err)) return { code: err.code, message: err.message, transient: TRANSIENT_CODES.has(err.code) };
  const e = err as { code?: unknown; reason?: unknown; message?: unknown };
  if (typeof e?.code === 'string' && ['no_audio_stream', 'invalid_for_input'].includes(e.code)) {
    return { code: e.code, message: String(e.message), transient: false };
  }
  if (e?.code === 'transform_failed') return { code: 'transform_failed', message: String(e.message), transient: false };
  if (e?.reason === 'timeout')
    return { code: 'task_timeout', message: 'the task ran longer than its time limit', transient: true };
  return {
    code: 'internal_error',
    message: 'the task failed with an internal error; it has been logged',
    transient: true,
  };
}

/** Delay before attempt `attempt + 1` (attempt counts from 1), with ±20% jitter so retries spread out. */
export function backoffDelay(policy: RetryPolicy, attempt: number, random = Math.random): number {
  const base = policy.backoffMs * 2 ** Math.max(0, attempt - 1);
  return Math.round(base * (0.8 + 0.4 * random()));
}
