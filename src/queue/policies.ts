import type { TaskKind } from '../shapes/task-kinds.js';

/** Attempts, backoff and time limit of a kind's tasks. */
export interface RetryPolicy {
  maxAttempts: number;
  /** First retry waits this long; each later one doubles it. */
  backoffMs: number;
  timeoutMs: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * Retry policy per kind, as data (PeerTube's job table): the queue reads it when a task is
 * created (its attempts) and when one fails (its backoff), the worker pool for its time limit.
 * Intelligence kinds call model servers, which answer 429/5xx under load: more attempts.
 */
export const RETRY_POLICIES: Record<TaskKind, RetryPolicy> = {
  ingest: { maxAttempts: 5, backoffMs: 2_000, timeoutMs: 2 * HOUR },
  video: { maxAttempts: 3, backoffMs: 5_000, timeoutMs: 2 * HOUR },
  image: { maxAttempts: 3, backoffMs: 2_000, timeoutMs: 10 * MINUTE },
  audio: { maxAttempts: 3, backoffMs: 5_000, timeoutMs: HOUR },
  thumbnails: { maxAttempts: 3, backoffMs: 5_000, timeoutMs: HOUR },
  speech: { maxAttempts: 4, backoffMs: 10_000, timeoutMs: 4 * HOUR },
  subtitles: { maxAttempts: 4, backoffMs: 10_000, timeoutMs: 4 * HOUR },
  chapters: { maxAttempts: 4, backoffMs: 10_000, timeoutMs: 4 * HOUR },
  nsfw: { maxAttempts: 4, backoffMs: 5_000, timeoutMs: 2 * HOUR },
  description: { maxAttempts: 4, backoffMs: 10_000, timeoutMs: HOUR },
  outline: { maxAttempts: 4, backoffMs: 10_000, timeoutMs: 4 * HOUR },
  prompt: { maxAttempts: 4, backoffMs: 10_000, timeoutMs: HOUR },
  workflow: { maxAttempts: 3, backoffMs: 1_000, timeoutMs: 5 * MINUTE },
  conditions: { maxAttempts: 3, backoffMs: 1_000, timeoutMs: MINUTE },
  http: { maxAttempts: 4, backoffMs: 5_000, timeoutMs: MINUTE },
  adaptive_video: { maxAttempts: 3, backoffMs: 5_000, timeoutMs: 4 * HOUR },
};

export function policyOf(kind: string): RetryPolicy {
  return (RETRY_POLICIES as Record<string, RetryPolicy>)[kind] ?? { maxAttempts: 1, backoffMs: 1_000, timeoutMs: HOUR };
}
