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
} from '../services/media/automations.js';
import { dryRunAutomation } from '../services/media/automation-dry-run.js';
import { listAutomationRuns } from '../services/media/automation-history.js';
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

const Decision = Type.Union([Type.Literal('yes'), Type.Literal('no'), Type.Literal('unknown')]);
const DryRunCondition = Type.Object({
  prop: Type.String(),
  op: Type.String(),
  value: Type.Optional(Type.Unknown()),
  actual: Type.Optional(Type.Unknown()),
  passed: Nullable(Type.Boolean()),
  depends_on: Type.Optional(Type.String()),
});
const Problem = Type.Object({ field: Type.String(), message: Type.String() });
const DryRunSchema = Type.Object({
  object: Type.Literal('automation_dry_run'),
  automation_id: Type.String(),
  automation_status: Type.String(),
  media_id: Type.String(),
  file_id: Type.String(),
  trigger: Type.Object({ event: Type.String(), passed: Type.Boolean(), conditions: Type.Array(DryRunCondition) }),
  would_start: Type.Boolean(),
  steps: Type.Array(
    Type.Object({
      path: Type.String(),
      parent: Nullable(Type.String()),
      kind: Type.String(),
      runs: Decision,
      reason: Type.String(),
      input_file_id: Type.Optional(Type.String()),
      input_from: Type.Optional(Type.String()),
      conditions: Type.Optional(Type.Array(DryRunCondition)),
      branch: Type.Optional(Type.Union([Type.Literal('taken'), Type.Literal('not_taken'), Type.Literal('unknown')])),
      problems: Type.Array(Problem),
    }),
  ),
  problems: Type.Array(Problem),
});
const DryRunBody = Type.Object(
  { media_id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$' }) },
  { additionalProperties: false },
);

const runTaskFields = {
  id: Type.String(),
  kind: Type.String(),
  status: Type.String(),
  created: Type.String(),
  started: Type.Optional(Type.String()),
  finished: Type.Optional(Type.String()),
  duration_ms: Type.Optional(Type.Integer()),
  error: Type.Optional(Type.String()),
  error_code: Type.Optional(Type.String()),
  input_file_id: Type.Optional(Type.String()),
  output_file_id: Type.Optional(Type.String()),
};
const RunSchema = Type.Object({
  ...runTaskFields,
  object: Type.Literal('automation_run'),
  event_id: Type.Optional(Type.String()),
  steps: Type.Array(Type.Object(runTaskFields)),
});

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

  // Reads only: nothing is created (POST because it evaluates a body against the automation).
  app.post(
    '/automations/:id/dry-run',
    {
      schema: {
        params: IdParams,
        body: DryRunBody,
        response: { 200: objectEnvelope(DryRunSchema), ...errorResponses },
      },
    },
    async (req) =>
      objectBody(req, await dryRunAutomation(deps, req.auth!, req.params.id, req.body.media_id), links(req.params.id)),
  );

  app.get(
    '/automations/:id/runs',
    {
      schema: {
        params: IdParams,
        querystring: plainPageQuery(20),
        response: { 200: listEnvelope(RunSchema), ...errorResponses },
      },
    },
    async (req) =>
      listBody(
        req,
        `${base}/${req.params.id}/runs`,
        await listAutomationRuns(deps, req.auth!, req.params.id, req.query),
      ),
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
