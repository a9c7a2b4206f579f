import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { listBody, objectBody } from '../http/envelope.js';
import {
  IdParams,
  ListLinks,
  ListMeta,
  ObjectLinks,
  ObjectMeta,
  errorResponses,
  objectEnvelope,
  pageQuery,
} from '../http/schemas.js';
import { TASK_KINDS } from '../shapes/task-kinds.js';
import { TaskSchema } from './task-schemas.js';
import { cancelTask, createTask, getTask, listTasks, retryTask, retryTasks } from '../services/media/tasks.js';
import { tasksConfig } from '../services/media/tasks-config.js';
import { enginesOf } from '../kinds/engines.js';

// SPEC 2.1: task responses (get, create) omit the envelope's error key.
const TaskEnvelope = Type.Object({ meta: ObjectMeta, data: TaskSchema, links: ObjectLinks });
const TaskList = Type.Object({ meta: ListMeta, data: Type.Array(TaskSchema), error: Type.Null(), links: ListLinks });

const CreateTaskBody = Type.Object(
  {
    kind: Type.Enum([...TASK_KINDS]),
    url: Type.Optional(Type.String({ format: 'uri', maxLength: 4096 })),
    workflow: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 100 })),
    file_id: Type.Optional(Type.String({ maxLength: 64 })),
    filename: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    folder: Type.Optional(Type.String({ maxLength: 255 })),
    ref: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' })),
    webhook_url: Type.Optional(Type.String({ format: 'uri', maxLength: 4096 })),
  },
  { additionalProperties: true },
);

/** Per kind: how it takes its input, its options as JSON Schema (what POST /tasks checks), formats, codecs. */
const KindConfigSchema = Type.Object({
  kind: Type.String(),
  input: Type.Enum(['file', 'url', 'none']),
  /** The kinds of file it takes (absent: any). */
  input_kinds: Type.Optional(Type.Array(Type.Enum(['video', 'image', 'audio']))),
  /** An intelligence kind: the engine it runs with by default here, or why it cannot run (422 engine_unavailable). */
  engine: Type.Optional(
    Type.Object({
      default: Type.Optional(Type.Enum(['local', 'provider'])),
      unavailable: Type.Optional(Type.String()),
    }),
  ),
  options: Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown())),
  required: Type.Array(Type.String()),
  formats: Type.Optional(Type.Array(Type.Unknown())),
  codecs: Type.Optional(Type.Array(Type.Unknown())),
  retry: Type.Object({ max_attempts: Type.Integer(), timeout_seconds: Type.Integer() }),
});
const TasksConfigSchema = Type.Record(Type.String(), KindConfigSchema);

const TaskQuery = pageQuery(20, {
  status: Type.Optional(Type.Enum(['pending', 'processing', 'waiting', 'completed', 'failed', 'cancelled'])),
  kind: Type.Optional(Type.Enum([...TASK_KINDS])),
  media_id: Type.Optional(IdParams.properties.id),
  automation_id: Type.Optional(IdParams.properties.id),
});

const RetryBody = Type.Object(
  {
    status: Type.Optional(Type.Literal('failed')),
    kind: Type.Optional(Type.Enum([...TASK_KINDS])),
    media_id: Type.Optional(IdParams.properties.id),
    automation_id: Type.Optional(IdParams.properties.id),
  },
  { additionalProperties: false },
);
const RetrySchema = Type.Object({
  object: Type.Literal('retry'),
  retried: Type.Integer(),
  tasks: Type.Array(Type.String()),
  errors: Type.Array(Type.Object({ task_id: Type.String(), code: Type.String(), message: Type.String() })),
  /** More failed tasks matched than one call takes: call again for the next ones. */
  more: Type.Boolean(),
});

export const tasksRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const base = `${deps.config.publicUrl}/tasks`;
  const links = (id: string) => ({ self: `${base}/${id}`, parent: base });
  const taskBody = (req: Parameters<typeof objectBody>[0], task: Awaited<ReturnType<typeof getTask>>) => {
    const { error: _omitted, ...envelope } = objectBody(req, task, links(task.id));
    return envelope;
  };

  app.post(
    '/tasks',
    { schema: { body: CreateTaskBody, response: { 201: TaskEnvelope, ...errorResponses } } },
    async (req, reply) => reply.code(201).send(taskBody(req, await createTask(deps, req.auth!, req.body))),
  );

  app.get(
    '/tasks',
    { schema: { querystring: TaskQuery, response: { 200: TaskList, ...errorResponses } } },
    async (req) => {
      const { page, limit, ...filter } = req.query;
      const extra = Object.fromEntries(Object.entries(filter).filter((e): e is [string, string] => e[1] !== undefined));
      return listBody(req, base, await listTasks(deps, req.auth!, { page, limit }, filter), extra);
    },
  );

  app.get(
    '/tasks-config',
    { schema: { response: { 200: objectEnvelope(TasksConfigSchema), ...errorResponses } } },
    async (req) =>
      objectBody(req, tasksConfig(await enginesOf(deps.config)), {
        self: `${deps.config.publicUrl}/tasks-config`,
        parent: base,
      }),
  );

  app.get(
    '/tasks/:id',
    { schema: { params: IdParams, response: { 200: TaskEnvelope, ...errorResponses } } },
    async (req) => taskBody(req, await getTask(deps, req.auth!, req.params.id)),
  );

  app.post(
    '/tasks/:id/cancel',
    { schema: { params: IdParams, response: { 200: TaskEnvelope, ...errorResponses } } },
    async (req) => taskBody(req, await cancelTask(deps, req.auth!, req.params.id)),
  );

  app.post(
    '/tasks/:id/retry',
    { schema: { params: IdParams, response: { 201: TaskEnvelope, ...errorResponses } } },
    async (req, reply) => reply.code(201).send(taskBody(req, await retryTask(deps, req.auth!, req.params.id))),
  );

  app.post(
    '/tasks/retry',
    { schema: { body: RetryBody, response: { 200: objectEnvelope(RetrySchema), ...errorResponses } } },
    async (req) => {
      const { status: _failedOnly, ...filter } = req.body;
      return objectBody(req, await retryTasks(deps, req.auth!, filter), { self: `${base}/retry`, parent: base });
    },
  );
};
