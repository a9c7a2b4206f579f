import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { listBody, objectBody } from '../http/envelope.js';
import { IdParams, Nullable, errorResponses, listEnvelope, objectEnvelope, plainPageQuery } from '../http/schemas.js';
import { SCOPES } from '../services/access.js';
import { projectAudit } from '../services/audit.js';
import { createProjectKey, listProjectKeys, revokeProjectKey, updateProjectKey } from '../services/people/keys.js';
import { DeletedSchema } from './file-schemas.js';

export const KeySchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('api_key'),
  name: Type.Optional(Type.String()),
  /** The key's first and last characters, to recognise it. */
  hint: Type.String(),
  scopes: Type.Array(Type.String()),
  expires: Type.Optional(Type.String()),
  /** When it was paused: it answers 401 until resumed. */
  paused: Type.Optional(Type.String()),
  created_by: Type.Optional(Type.String()),
  created: Type.String(),
  last_used: Type.Optional(Type.String()),
  revoked: Type.Optional(Type.String()),
  /** The key itself: only in the answer that makes it. */
  key: Type.Optional(Type.String()),
});

const Name = Nullable(Type.String({ maxLength: 200 }));
const CreateBody = Type.Object(
  {
    name: Type.Optional(Name),
    scopes: Type.Optional(Type.Array(Type.Enum([...SCOPES]), { minItems: 1, maxItems: SCOPES.length })),
    expires: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
  },
  { additionalProperties: false },
);
const PatchBody = Type.Object(
  { name: Type.Optional(Name), paused: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

/** The project's API keys: made (shown once), listed, renamed, paused and resumed, revoked. */
export const keysRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const base = `${deps.config.publicUrl}/keys`;
  const links = (id: string) => ({ self: `${base}/${id}`, parent: base });

  app.get(
    '/keys',
    { schema: { querystring: plainPageQuery(20), response: { 200: listEnvelope(KeySchema), ...errorResponses } } },
    async (req) => listBody(req, base, await listProjectKeys(deps, req.auth!, req.query)),
  );

  app.post(
    '/keys',
    { schema: { body: CreateBody, response: { 201: objectEnvelope(KeySchema), ...errorResponses } } },
    async (req, reply) => {
      const p = req.auth!.principal;
      const key = await createProjectKey(
        deps,
        req.auth!,
        {
          ...req.body,
          createdBy: p.type === 'session' ? p.userId : null,
        },
        projectAudit(req.auth!, req.ip),
      );
      return reply.code(201).send(objectBody(req, key, links(key.id)));
    },
  );

  app.patch(
    '/keys/:id',
    { schema: { params: IdParams, body: PatchBody, response: { 200: objectEnvelope(KeySchema), ...errorResponses } } },
    async (req) =>
      objectBody(
        req,
        await updateProjectKey(deps, req.auth!, req.params.id, req.body, projectAudit(req.auth!, req.ip)),
        links(req.params.id),
      ),
  );

  app.delete(
    '/keys/:id',
    { schema: { params: IdParams, response: { 200: objectEnvelope(DeletedSchema), ...errorResponses } } },
    async (req) => {
      const id = req.params.id;
      await revokeProjectKey(deps, req.auth!, id, projectAudit(req.auth!, req.ip));
      return objectBody(req, { id, object: 'api_key', deleted: true, message: `${id} revoked` }, links(id));
    },
  );
};
