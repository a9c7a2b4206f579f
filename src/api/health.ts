import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { Type } from 'typebox';
import { objectBody } from '../http/envelope.js';
import { errorResponses, objectEnvelope } from '../http/schemas.js';

/** GET /health: 200 once the database answers and storage is writable; no key needed. */
export async function healthRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const links = { self: `${deps.config.publicUrl}/health`, parent: deps.config.publicUrl };
  const schema = { response: { 200: objectEnvelope(Type.Object({ status: Type.Literal('ok') })), ...errorResponses } };
  app.get('/health', { config: { unversioned: true }, schema }, async (req) => {
    try {
      await sql`select 1`.execute(deps.db);
      await deps.blobs.checkWritable();
    } catch (err) {
      throw new AppError('service_unavailable', 'mediad is not ready: the database or storage does not answer', {
        cause: err,
      });
    }
    return objectBody(req, { status: 'ok' }, links);
  });
}
