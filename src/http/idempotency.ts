import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { canonicalJson } from './canonical-json.js';
import { addRouteHook, onRoutesWithMethod } from './route-hooks.js';
import type { Deps } from '../deps.js';
import { checkKeyFormat, claimKey, completeKey, releaseKey } from '../services/idempotency.js';

const HEADER = 'idempotency-key';

function fingerprint(req: FastifyRequest): string {
  return createHash('sha256')
    .update(`${req.method} ${req.url}\n${canonicalJson(req.body ?? null)}`)
    .digest('hex');
}

/**
 * Idempotency-Key handling for every POST route of the (authenticated) scope it is registered
 * in, before the routes: the hooks go on POST routes only, so other requests never run them.
 */
export function registerIdempotency(app: FastifyInstance, deps: Deps): void {
  const active = new WeakMap<FastifyRequest, { projectId: string; key: string }>();

  const preHandler = async (req: FastifyRequest, reply: FastifyReply) => {
    const key = req.headers[HEADER];
    if (req.method !== 'POST' || key === undefined || !req.auth) return;
    const value = Array.isArray(key) ? (key[0] ?? '') : key;
    checkKeyFormat(value);
    const claim = await claimKey(deps, req.auth.projectId, value, fingerprint(req));
    if (claim.kind === 'replay') {
      return reply
        .code(claim.status)
        .header('idempotent-replayed', 'true')
        .type('application/json; charset=utf-8')
        .send(claim.body);
    }
    active.set(req, { projectId: req.auth.projectId, key: value });
  };

  const onSend = async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const claim = active.get(req);
    if (!claim) return payload;
    active.delete(req);
    if (reply.statusCode >= 500 || typeof payload !== 'string') await releaseKey(deps, claim.projectId, claim.key);
    else await completeKey(deps, claim.projectId, claim.key, reply.statusCode, payload);
    return payload;
  };

  onRoutesWithMethod(app, ['POST'], (route) => {
    addRouteHook(route, 'preHandler', preHandler);
    addRouteHook(route, 'onSend', onSend);
  });
}
