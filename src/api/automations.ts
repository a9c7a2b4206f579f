import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { listBody, objectBody } from '../http/envelope.js';
import { IdParams, Nullable, errorResponses, listEnvelope, objectEnvelope, plainPageQuery } from '../http/schemas.js';
import {
  createAutomation,
  deleteAutomation,
  getAutomation,
  listAutomations,
  updateAutomation,
} from '../services/automations.js';
import { DeletedSchema } from './file-schemas.js';

const Free = Type.Record(Type.String(), Type.Unknown());
const TriggerSchema = Type.Object(
  { kind: Type.String(), event: Type.String(), conditions: Type.Optional(Type.Array(Type.Unknown())) },
  { additionalProperties: false },
);
const Status = Type.Union([Type.Literal('active'), Type.Literal('paused')]);
const Name = Nullable(Type.String({ maxLength: 200 }));
const Description = Nullable(Type.String({ maxLength: 2000 }));
const Workflow = Type.Array(Type.Unknown(), { maxItems: 100 });

const AutomationSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('automation'),
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  trigger: Free,
  workflow: Type.Array(Free),
  status: Type.String(),
  created: Type.String(),
  updated: Type.String(),
});

const CreateBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    trigger: TriggerSchema,
    workflow: Workflow,
    status: Type.Optional(Status),
  },
  { additionalProperties: false },
);
const PatchBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    trigger: Type.Optional(TriggerSchema),
    workflow: Type.Optional(Workflow),
    status: Type.Optional(Status),
  },
  { additionalProperties: false },
);

/** SPEC 2.5 / 4.6 automations; PATCH (partial) and PUT (replace), as reference.md Decisions 8 says. */
export const automationRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const base = `${deps.config.publicUrl}/automations`;
  const links = (id: string) => ({ self: `${base}/${id}`, parent: base });
  const one = { params: IdParams, response: { 200: objectEnvelope(AutomationSchema), ...errorResponses } };

  app.get(
    '/automations',
    {
      schema: { querystring: plainPageQuery(10), response: { 200: listEnvelope(AutomationSchema), ...errorResponses } },
    },
    async (req) => listBody(req, base, await listAutomations(deps, req.auth!, req.query)),
  );

  app.post(
    '/automations',
    { schema: { body: CreateBody, response: { 201: objectEnvelope(AutomationSchema), ...errorResponses } } },
    async (req, reply) => {
      const automation = await createAutomation(deps, req.auth!, req.body);
      return reply.code(201).send(objectBody(req, automation, links(automation.id)));
    },
  );

  app.get('/automations/:id', { schema: one }, async (req) =>
    objectBody(req, await getAutomation(deps, req.auth!, req.params.id), links(req.params.id)),
  );

  app.patch('/automations/:id', { schema: { ...one, body: PatchBody } }, async (req) =>
    objectBody(req, await updateAutomation(deps, req.auth!, req.params.id, req.body), links(req.params.id)),
  );

  app.put('/automations/:id', { schema: { ...one, body: CreateBody } }, async (req) =>
    objectBody(req, await updateAutomation(deps, req.auth!, req.params.id, req.body, true), links(req.params.id)),
  );

  app.delete(
    '/automations/:id',
    { schema: { params: IdParams, response: { 200: objectEnvelope(DeletedSchema), ...errorResponses } } },
    async (req) => {
      await deleteAutomation(deps, req.auth!, req.params.id);
      const id = req.params.id;
      return objectBody(
        req,
        { id, object: 'automation', deleted: true, message: `Automation ${id} deleted` },
        links(id),
      );
    },
  );
};
