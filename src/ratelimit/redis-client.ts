import { Redis } from 'ioredis';
import type { Logger } from 'pino';

const COMMAND_TIMEOUT_MS = 500;
const LOG_EVERY_MS = 30_000;

/**
 * The shared Redis client (MEDIAD_REDIS_URL). Commands fail fast while Redis is away (no
 * offline queue, a short timeout) so callers can fail open instead of making requests
 * wait; the client keeps reconnecting in the background. A Redis that is down at start is
 * logged, not fatal.
 */
export async function connectRedis(url: string, log: Logger): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: 2_000,
  });
  let lastLogged = 0;
  redis.on('error', (err: Error) => {
    // Every reconnect attempt errors; one line per 30 s is enough to notice.
    if (Date.now() - lastLogged < LOG_EVERY_MS) return;
    lastLogged = Date.now();
    log.warn({ err: err.message, redis: redactUrl(url) }, 'redis unavailable');
  });
  try {
    await redis.connect();
  } catch (err) {
    log.warn(
      { err: (err as Error).message, redis: redactUrl(url) },
      'redis unreachable at start; rate limits fail open until it is back',
    );
  }
  return redis;
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'redis://(unparseable url)';
  }
}
