import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { authenticate } from '../services/keys.js';

const CHALLENGE = 'Bearer realm="mediad"';

/** Runs after a request is authenticated, in the same hook (one hook per request is cheaper than two). */
export type AfterAuth = (req: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * Every route of the scope this is registered in requires `Authorization: Bearer <key>`;
 * `after` (the rate limiter) runs once req.auth is set.
 */
export function registerAuth(app: FastifyInstance, deps: Deps, after: AfterAuth | null = null): void {
  app.addHook('onRequest', async (req, reply) => {
    const header = req.headers.authorization;
    if (!header) {
      throw new AppError(
        'unauthorized',
        'missing API key: send the header "Authorization: Bearer <key>" (create a key with `mediad keys create`)',
        { headers: { 'www-authenticate': CHALLENGE } },
      );
    }
    const match = /^Bearer ([^\s]+)$/.exec(header);
    const auth = match?.[1] ? await authenticate(deps, match[1]) : null;
    if (!auth) {
      throw new AppError(
        'unauthorized',
        'invalid or revoked API key; check the Authorization header is "Bearer <key>" with a current key',
        {
          headers: { 'www-authenticate': `${CHALLENGE}, error="invalid_token"` },
        },
      );
    }
    req.auth = auth;
    // A request that names no version gets its project's default (PATCH /project {api_version}).
    req.apiVersion ??= auth.apiVersion;
    if (after) await after(req, reply);
  });
}
