// When a failed delivery is tried again: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h
// (about a day and a half in all), then it is marked failed. Jitter spreads retries of many
// deliveries that failed together.
export const RETRY_SCHEDULE_MS = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const;
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length;
const MAX_RETRY_AFTER_MS = 24 * 3600_000;

/** Delay before the next attempt after `attemptsMade` attempts, or null when the schedule is exhausted. */
export function nextDelayMs(
  attemptsMade: number,
  retryAfterMs: number | null = null,
  random = Math.random,
): number | null {
  const planned = RETRY_SCHEDULE_MS[attemptsMade];
  if (planned === undefined) return null;
  const jittered = Math.round(planned * (0.9 + 0.2 * random()));
  return retryAfterMs === null ? jittered : Math.max(jittered, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/** Retry-After as seconds or an HTTP date (RFC 9110 10.2.3), in ms from now; null when absent or invalid. */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}
