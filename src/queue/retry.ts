import { isEngineUnavailableError, isProviderError } from '../ai/index.js';
import { isAppError } from '../errors.js';
import { isMediaTransformError } from '../media/index.js';
import { SecretKeyError } from '../secrets/sealer.js';
import type { RetryPolicy } from './policies.js';

// Which failures are worth another attempt. Each error says so itself where it is made (its
// `transient` flag): AppError from its code (errors.ts), a transform's failure never (the input is at
// fault), an AI provider's by its answer (time-outs, 5xx, 429 and answers off the schema are
// retried, a 4xx such as a bad key is not), a missing local engine or secret key never. An FFmpeg
// run that hit its time limit, and anything unexpected, may pass next time.

/** The longest wait a provider's Retry-After may impose before the next attempt. */
export const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

export interface TaskFailure {
  code: string;
  message: string;
  transient: boolean;
  /** The provider asked to wait this long (Retry-After) before trying again. */
  retryAfterMs?: number;
}

export function classifyFailure(err: unknown): TaskFailure {
  if (isAppError(err) || isMediaTransformError(err))
    return { code: err.code, message: err.message, transient: err.transient };
  if (isProviderError(err)) {
    return {
      code: 'provider_failed',
      message: err.message,
      transient: err.transient,
      ...(err.retryAfterMs !== undefined ? { retryAfterMs: Math.min(err.retryAfterMs, MAX_RETRY_AFTER_MS) } : {}),
    };
  }
  if (err instanceof SecretKeyError)
    return { code: 'secret_unavailable', message: err.message, transient: err.transient };
  if (isEngineUnavailableError(err)) return { code: err.code, message: err.message, transient: err.transient };
  const e = err as { reason?: unknown };
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

/** The backoff, or the provider's Retry-After when that is longer. */
export function retryDelay(policy: RetryPolicy, attempt: number, failure: TaskFailure, random = Math.random): number {
  return Math.max(backoffDelay(policy, attempt, random), failure.retryAfterMs ?? 0);
}
