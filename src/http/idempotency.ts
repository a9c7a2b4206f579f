import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { checkKeyFormat, claimKey, completeKey, releaseKey } from '../services/idempotency.js';

const HEADER = 'idempotency-key';

/** Canonical JSON (sorted keys) so that key order does not make two bodies "different". */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function fingerprint(req: FastifyRequest): string {
  return createHash('sha256').update(`${req.method} ${req.url}\n${canonical(req.body ?? null)}`).digest('hex');
}

/** Adds Idempotency-Key handling to every POST of the (authenticated) scope it is registered in. */
export function registerIdempotency(app: FastifyInstance, deps: Deps): void {
  const active = new WeakMap<FastifyRequest, { projectId: string; key: string }>();

  app.addHook('preHandler', async (req, reply) => {
    const key = req.headers[HEADER];
    if (req.method !== 'POST' || key === undefined || !req.auth) return;
    const value = Array.isArray(key) ? key[0] ?? '' : key;
    checkKeyFormat(value);
    const claim = await claimKey(deps, req.auth.projectId, value, fingerprint(req));
    if (claim.kind === 'replay') {
      return reply.code(claim.status).header('idempotent-replayed', 'true').type('application/json; charset=utf-8').send(claim.body);
    }
    active.set(req, { projectId: req.auth.projectId, key: value });
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const claim = active.get(req);
    if (!claim) return payload;
    active.delete(req);
    if (reply.statusCode >= 500 || typeof payload !== 'string') await releaseKey(deps, claim.projectId, claim.key);
    else await completeKey(deps, claim.projectId, claim.key, reply.statusCode, payload);
    return payload;
  });
}
