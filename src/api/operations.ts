import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { arrayPage } from '../db/paginate.js';
import { listBody, objectBody } from '../http/envelope.js';
import { errorResponses, listEnvelope, Nullable, objectEnvelope, plainPageQuery } from '../http/schemas.js';
import { actorOf } from '../services/audit.js';
import { listWorkers, pauseKind, queueOverview, resumeKind } from '../services/operations/queue.js';
import { systemStatus } from '../services/operations/system.js';
import { TASK_KINDS } from '../shapes/task-kinds.js';
import { MEDIAD_VERSION } from './docs/openapi.js';

// Running mediad: the organisation's queue per task kind (pause and resume a kind), the worker
// processes alive, and the state of the system (GET /system).

const KindQueueSchema = Type.Object({
  kind: Type.String(),
  pending: Type.Integer(),
  delayed: Type.Integer(),
  processing: Type.Integer(),
  waiting: Type.Integer(),
  failed: Type.Integer(),
  paused: Type.Boolean(),
  paused_at: Type.Optional(Type.String()),
  oldest_pending_seconds: Type.Optional(Type.Integer()),
});

const QueueSchema = Type.Object({
  object: Type.Literal('queue'),
  org_id: Type.String(),
  kinds: Type.Array(KindQueueSchema),
});

const RunningTaskSchema = Type.Object({ id: Type.String(), kind: Type.String(), project_id: Type.String() });
const WorkerSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('worker'),
  host: Type.String(),
  pid: Type.Integer(),
  concurrency: Type.Integer(),
  started: Type.String(),
  last_heartbeat: Type.String(),
  current_task_id: Nullable(Type.String()),
  current_tasks: Type.Array(RunningTaskSchema),
});

const EngineSchema = Type.Object({
  engine: Type.String(),
  found: Type.Boolean(),
  version: Nullable(Type.String()),
  model: Nullable(Type.String()),
  message: Type.Optional(Nullable(Type.String())),
});
const ProviderSchema = Type.Object(
  {
    role: Type.String(),
    base_url: Type.String(),
    model: Type.String(),
    model_listed: Type.Boolean(),
    reachable: Type.Boolean(),
    models: Type.Array(Type.String()),
  },
  { additionalProperties: true },
);
const QueueTotalsSchema = Type.Object({
  pending: Type.Integer(),
  delayed: Type.Integer(),
  processing: Type.Integer(),
  waiting: Type.Integer(),
  failed: Type.Integer(),
  oldest_pending_seconds: Type.Optional(Type.Integer()),
});
const SystemSchema = Type.Object({
  object: Type.Literal('system'),
  version: Type.String(),
  node: Type.String(),
  database: Type.Object({ backend: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]) }),
  storage: Type.Object({
    backend: Type.Union([Type.Literal('disk'), Type.Literal('s3')]),
    bucket: Type.Optional(Type.String()),
  }),
  ffmpeg: Type.Array(Type.Object({ tool: Type.String(), found: Type.Boolean(), version: Nullable(Type.String()) })),
  engines: Type.Object({
    local: Type.Array(EngineSchema),
    provider: Type.Array(ProviderSchema),
    kinds: Type.Record(Type.String(), Type.String()),
    problems: Type.Array(Type.String()),
    warnings: Type.Array(Type.String()),
    checked: Type.String(),
  }),
  queue: QueueTotalsSchema,
});

const KindParams = Type.Object({ kind: Type.Enum([...TASK_KINDS]) });

export const operationsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const root = deps.config.publicUrl;
  const queueLinks = { self: `${root}/queue`, parent: root };

  app.get('/queue', { schema: { response: { 200: objectEnvelope(QueueSchema), ...errorResponses } } }, async (req) =>
    objectBody(req, await queueOverview(deps, req.auth!), queueLinks),
  );

  for (const action of ['pause', 'resume'] as const) {
    app.post(
      `/queue/kinds/:kind/${action}`,
      { schema: { params: KindParams, response: { 200: objectEnvelope(KindQueueSchema), ...errorResponses } } },
      async (req) => {
        const kind = await (action === 'pause' ? pauseKind : resumeKind)(
          deps,
          req.auth!,
          req.params.kind,
          actorOf(req.auth!, req.ip),
        );
        return objectBody(req, kind, { self: `${root}/queue/kinds/${kind.kind}/${action}`, parent: `${root}/queue` });
      },
    );
  }

  app.get(
    '/workers',
    { schema: { querystring: plainPageQuery(100), response: { 200: listEnvelope(WorkerSchema), ...errorResponses } } },
    async (req) => listBody(req, `${root}/workers`, arrayPage(await listWorkers(deps, req.auth!), req.query)),
  );

  app.get('/system', { schema: { response: { 200: objectEnvelope(SystemSchema), ...errorResponses } } }, async (req) =>
    objectBody(req, await systemStatus(deps, MEDIAD_VERSION), { self: `${root}/system`, parent: root }),
  );
};
