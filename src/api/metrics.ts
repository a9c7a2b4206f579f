import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { errorResponses } from '../http/schemas.js';
import { httpRequestsText } from '../metrics/http-requests.js';
import { QUEUE_STATUSES, registry, setQueueDepth } from '../metrics/registry.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/**
 * GET /metrics in Prometheus text format, outside the API-key scope. With MEDIAD_METRICS_TOKEN
 * it requires `Authorization: Bearer <token>`; without one it answers loopback clients only.
 */
export async function metricsRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const token = deps.config.metricsToken;
  const tokenDigest = token ? digest(token) : null;

  const schema = {
    response: {
      200: {
        description: 'The Prometheus text exposition format',
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
      ...errorResponses,
    },
  };
  app.get('/metrics', { config: { unversioned: true }, schema }, async (req, reply) => {
    if (tokenDigest) {
      const m = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
      // Digests have equal length, so the comparison time says nothing about the token.
      if (!m?.[1] || !timingSafeEqual(digest(m[1]), tokenDigest)) {
        throw new AppError(
          'unauthorized',
          'GET /metrics needs the header "Authorization: Bearer <MEDIAD_METRICS_TOKEN>"',
          {
            headers: { 'www-authenticate': 'Bearer realm="mediad-metrics"' },
          },
        );
      }
    } else if (!isLocalClient(req)) {
      throw new AppError(
        'forbidden',
        'GET /metrics answers only local clients; set MEDIAD_METRICS_TOKEN to scrape it over the network with "Authorization: Bearer <token>"',
      );
    }
    const rows = await deps.db
      .selectFrom('tasks')
      .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
      .where('status', 'in', QUEUE_STATUSES)
      .groupBy('status')
      .execute();
    setQueueDepth(rows.map((r) => ({ status: r.status, n: Number(r.n) })));
    const body = `${await registry.metrics()}\n${httpRequestsText()}`;
    return reply.header('cache-control', 'no-store').type(registry.contentType).send(body);
  });
}

/**
 * A loopback peer that is not a proxy relaying someone else: a reverse proxy on the same host
 * connects from 127.0.0.1 too, but adds X-Forwarded-For / Forwarded.
 */
function isLocalClient(req: FastifyRequest): boolean {
  const peer = req.socket.remoteAddress;
  if (!peer || !LOOPBACK.has(peer)) return false;
  return req.headers['x-forwarded-for'] === undefined && req.headers.forwarded === undefined;
}
