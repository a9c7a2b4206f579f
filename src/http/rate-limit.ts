import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AfterAuth } from './auth.js';
import type { Deps } from '../deps.js';
import { principalId } from '../services/access.js';
import { AppError } from '../errors.js';
import { MemoryStore, PostgresStore, RedisStore, type RateLimitStore } from '../ratelimit/stores.js';
import { decide, windowIndex, type Decision } from '../ratelimit/window.js';

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
 * Counts one request against `key` and decides; null when the store failed. Fail open: a limiter
 * outage (Redis or the database away) must never become an API outage, so the request goes
 * through unlimited (with a warning at most every 30 s). The in-memory store answers at once,
 * and so does this then (no promise on the API's hot path); Redis and PostgreSQL with a promise.
 */
function counter(store: RateLimitStore) {
  let lastWarned = 0;
  const failed = (req: FastifyRequest, now: number, err: unknown): null => {
    if (now - lastWarned > WARN_EVERY_MS) {
      lastWarned = now;
      req.log.warn(
        { err, store: store.name },
        'rate limit store failed; allowing requests unlimited until it recovers',
      );
    }
    return null;
  };
  return (req: FastifyRequest, key: string, limit: number): Decision | null | Promise<Decision | null> => {
    const now = Date.now();
    try {
      const counts = store.hit(key, windowIndex(now));
      if (counts instanceof Promise)
        return counts.then(
          (c) => decide(limit, now, c),
          (err: unknown) => failed(req, now, err),
        );
      return decide(limit, now, counts);
    } catch (err) {
      return failed(req, now, err);
    }
  };
}

function refusal(d: Decision, message: string): AppError {
  const wait = String(d.retryAfterSeconds);
  return new AppError('rate_limited', `${message}; retry in ${wait} s (see the Retry-After header)`, {
    headers: {
      'retry-after': wait,
      'ratelimit-limit': String(d.limit),
      'ratelimit-remaining': '0',
      'ratelimit-reset': wait,
    },
  });
}

/**
 * Requests per minute per API key or signed-in user (MEDIAD_RATE_LIMIT_PER_MINUTE; null when
 * 0 = off), run by registerAuth once it has set req.auth. Every authenticated answer carries
 * RateLimit-Limit/-Remaining/-Reset; a refusal is a 429 rate_limited with Retry-After.
 */
export function createRateLimiter(deps: Deps, store: RateLimitStore = createRateLimitStore(deps)): AfterAuth | null {
  const limit = deps.config.rateLimitPerMinute;
  if (limit === 0) return null;
  const count = counter(store);
  const limitHeader = String(limit);

  const apply = (req: FastifyRequest, reply: FastifyReply, d: Decision | null): void => {
    if (!d) return;
    reply.header('ratelimit-limit', limitHeader);
    reply.header('ratelimit-remaining', String(d.remaining));
    reply.header('ratelimit-reset', String(d.resetSeconds));
    const who = req.auth?.principal.type === 'session' ? 'you' : 'this API key';
    if (!d.allowed) throw refusal(d, `rate limit of ${limit} requests per minute for ${who} exceeded`);
  };

  return (req, reply) => {
    if (!req.auth) return;
    const d = count(req, principalId(req.auth.principal), limit);
    if (d instanceof Promise) return d.then((x) => apply(req, reply, x));
    apply(req, reply, d);
  };
}

/**
 * Sign-in attempts per minute, per account (MEDIAD_SIGN_IN_PER_MINUTE) and per client address
 * (…_PER_ADDRESS): a password guesser is slowed whether it tries many passwords on one account
 * or one password on many. Counted before the password is checked, so every attempt counts, and
 * by a hash of the email, so an unknown email behaves as a known one.
 */
export function createSignInLimiter(deps: Deps, store: RateLimitStore = createRateLimitStore(deps)) {
  const { signInPerMinutePerAccount: perAccount, signInPerMinutePerAddress: perAddress } = deps.config.accounts;
  const count = counter(store);
  return async (req: FastifyRequest, email: string): Promise<void> => {
    const account = createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 32);
    const byAccount = await count(req, `sign-in:account:${account}`, perAccount);
    if (byAccount && !byAccount.allowed) throw refusal(byAccount, 'too many sign-in attempts for this account');
    const byAddress = await count(req, `sign-in:address:${req.ip}`, perAddress);
    if (byAddress && !byAddress.allowed) throw refusal(byAddress, 'too many sign-in attempts from your address');
  };
}
