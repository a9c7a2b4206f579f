// Sliding window from two fixed windows: the previous minute's count is weighted by how much
// of it still overlaps the last 60 s. Stores only count per fixed window, so one atomic
// increment (plus a read of the previous count) per request is all a backend does.

export const WINDOW_MS = 60_000;

/** Counts of the current and the previous fixed window, after this request was counted. */
export interface WindowCounts {
  current: number;
  previous: number;
}

export interface Decision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current fixed window rolls over; on a refusal, the same as retryAfter. */
  resetSeconds: number;
  /** Seconds until one more request would be allowed (only when refused). */
  retryAfterSeconds?: number;
}

/** Index of the fixed window `nowMs` falls in; backends key their counters by it. */
export const windowIndex = (nowMs: number): number => Math.floor(nowMs / WINDOW_MS);

export function decide(limit: number, nowMs: number, counts: WindowCounts): Decision {
  const elapsed = nowMs - windowIndex(nowMs) * WINDOW_MS;
  const used = counts.previous * (1 - elapsed / WINDOW_MS) + counts.current;
  const toRollover = WINDOW_MS - elapsed;
  if (used <= limit) {
    return {
      allowed: true,
      limit,
      remaining: Math.max(0, Math.floor(limit - used)),
      resetSeconds: Math.max(1, Math.ceil(toRollover / 1000)),
    };
  }
  // Refused requests are counted too (a single atomic INCR), so a client that ignores
  // Retry-After keeps itself limited; the wait below assumes it sends nothing meanwhile.
  let waitMs: number;
  if (counts.current + 1 <= limit && counts.previous > 0) {
    // Still this window: wait until enough of the previous window has slid out.
    const weight = (limit - counts.current - 1) / counts.previous;
    waitMs = WINDOW_MS * (1 - weight) - elapsed;
  } else {
    // Next window: this window's count, now the previous one, must slide out far enough.
    waitMs = toRollover + WINDOW_MS * (1 - (limit - 1) / counts.current);
  }
  const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
  return { allowed: false, limit, remaining: 0, resetSeconds: retryAfterSeconds, retryAfterSeconds };
}
