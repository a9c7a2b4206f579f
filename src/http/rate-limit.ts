import type { AfterAuth } from './auth.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { MemoryStore, PostgresStore, RedisStore, type RateLimitStore } from '../ratelimit/stores.js';
import { decide, windowIndex } from '../ratelimit/window.js';

const WARN_EVERY_MS = 30_000;

/** Redis when configured (shared by every process), else PostgreSQL's table, else this process's memory. */
export function createRateLimitStore(deps: Pick<Deps, 'config' | 'db' | 'log' | 'redis'>): RateLimitStore {
  if (deps.redis) return new RedisStore(deps.redis);
  if (deps.config.database.dialect === 'postgres') {
    return new PostgresStore(deps.db, (err) => deps.log.warn({ err }, 'rate limit sweep failed'));
  }
  return new MemoryStore();
}

/**
 * Requests per minute per API key (MEDIAD_RATE_LIMIT_PER_MINUTE; null when 0 = off), run by
 * registerAuth once it has set req.auth: it keys on req.auth.keyId. Every authenticated answer
 * carries RateLimit-Limit/-Remaining/-Reset; a refusal is a 429 rate_limited with Retry-After.
 */
export function createRateLimiter(deps: Deps, store: RateLimitStore = createRateLimitStore(deps)): AfterAuth | null {
  const limit = deps.config.rateLimitPerMinute;
  if (limit === 0) return null;
  const limitHeader = String(limit);
  let lastWarned = 0;

  return async (req, reply) => {
    const keyId = req.auth?.keyId;
    if (!keyId) return;
    const now = Date.now();
    let counts;
    try {
      counts = await store.hit(keyId, windowIndex(now));
    } catch (err) {
      // Fail open: a limiter outage (Redis or the database away) must never become an API
      // outage. The request goes through unlimited, without RateLimit headers.
      if (now - lastWarned > WARN_EVERY_MS) {
        lastWarned = now;
        req.log.warn(
          { err, store: store.name },
          'rate limit store failed; allowing requests unlimited until it recovers',
        );
      }
      return;
    }
    const d = decide(limit, now, counts);
    reply.header('ratelimit-limit', limitHeader);
    reply.header('ratelimit-remaining', String(d.remaining));
    reply.header('ratelimit-reset', String(d.resetSeconds));
    if (!d.allowed) {
      const wait = String(d.retryAfterSeconds);
      throw new AppError(
        'rate_limited',
        `rate limit of ${limit} requests per minute for this API key exceeded; retry in ${wait} s (see the Retry-After header)`,
        {
          headers: {
            'retry-after': wait,
            'ratelimit-limit': limitHeader,
            'ratelimit-remaining': '0',
            'ratelimit-reset': wait,
          },
        },
      );
    }
  };
}
