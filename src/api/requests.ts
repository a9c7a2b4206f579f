import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { listBody, objectBody } from '../http/envelope.js';
import { errorResponses, IdParams, listEnvelope, objectEnvelope, pageQuery } from '../http/schemas.js';
import { getRequest, listRequests, STATUS_CLASSES } from '../services/operations/request-log.js';
import { getUsage, USAGE_RANGES } from '../services/operations/usage.js';

// The project's request log (GET /requests, /requests/{id}) and usage (GET /usage): read with the
// project family's read access, like its settings.

export const RequestSchema = Type.Object({
  /** The request's id: its x-request-id and meta.request_id. */
  id: Type.String(),
  object: Type.Literal('request'),
  created: Type.String(),
  method: Type.String(),
  /** Path and query as sent, with the values of secret query parameters (signatures, tokens, keys) redacted. */
  path: Type.String(),
  /** The public address of `path`: with `method`, what "copy as curl" needs (the caller adds their own key). */
  url: Type.String(),
  /** The route pattern, e.g. /files/:id. */
  route: Type.Optional(Type.String()),
  status: Type.Integer(),
  duration_ms: Type.Number(),
  /** Who made it: an API key, a signed-in user (session), or a signed upload URL. */
  actor: Type.Enum(['key', 'session', 'signed_url']),
  key: Type.Optional(Type.Object({ id: Type.String(), name: Type.Optional(Type.String()) })),
  user: Type.Optional(Type.Object({ id: Type.String(), email: Type.Optional(Type.String()) })),
});

const RequestsQuery = pageQuery(20, {
  status_class: Type.Optional(Type.Enum([...STATUS_CLASSES])),
  method: Type.Optional(Type.Enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])),
  key_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$' })),
  user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$' })),
  created_after: Type.Optional(Type.String({ format: 'date-time' })),
  created_before: Type.Optional(Type.String({ format: 'date-time' })),
});

const Counts = Type.Object({ completed: Type.Integer(), failed: Type.Integer(), cancelled: Type.Integer() });
const CountSeries = Type.Object({
  completed: Type.Array(Type.Integer()),
  failed: Type.Array(Type.Integer()),
  cancelled: Type.Array(Type.Integer()),
});
export const UsageSchema = Type.Object({
  object: Type.Literal('usage'),
  range: Type.Enum([...USAGE_RANGES]),
  interval: Type.Enum(['hour', 'day']),
  /** Start of the first bucket; end of the last (the current hour or UTC day, still counting). */
  start: Type.String(),
  end: Type.String(),
  /** What the project's files hold now. */
  storage_bytes: Type.Integer(),
  totals: Type.Object({
    bytes_delivered: Type.Integer(),
    /** Per task kind: run time of the tasks that ended in the range. */
    processing_seconds: Type.Record(Type.String(), Type.Number()),
    tasks: Counts,
    /** Image URLs (issue 24): results computed (cache misses), and their bytes. */
    image_transformations: Type.Integer(),
    image_derived_bytes: Type.Integer(),
  }),
  /** Columns, one value per bucket (as uPlot takes them): `time` holds each bucket's start. */
  series: Type.Object({
    time: Type.Array(Type.String()),
    bytes_delivered: Type.Array(Type.Integer()),
    processing_seconds: Type.Record(Type.String(), Type.Array(Type.Number())),
    tasks: CountSeries,
  }),
});

const UsageQuery = Type.Object(
  { range: Type.Enum([...USAGE_RANGES], { default: '7d' }) },
  { additionalProperties: true },
);

export const requestsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const base = `${deps.config.publicUrl}/requests`;

  app.get(
    '/requests',
    { schema: { querystring: RequestsQuery, response: { 200: listEnvelope(RequestSchema), ...errorResponses } } },
    async (req) => {
      const { page, limit, ...filter } = req.query;
      const extra = Object.fromEntries(Object.entries(filter).filter((e): e is [string, string] => e[1] !== undefined));
      return listBody(req, base, await listRequests(deps, req.auth!, { page, limit }, filter), extra);
    },
  );

  app.get(
    '/requests/:id',
    { schema: { params: IdParams, response: { 200: objectEnvelope(RequestSchema), ...errorResponses } } },
    async (req) =>
      objectBody(req, await getRequest(deps, req.auth!, req.params.id), {
        self: `${base}/${req.params.id}`,
        parent: base,
      }),
  );

  app.get(
    '/usage',
    { schema: { querystring: UsageQuery, response: { 200: objectEnvelope(UsageSchema), ...errorResponses } } },
    async (req) =>
      objectBody(req, await getUsage(deps, req.auth!.projectId, req.query.range), {
        self: `${deps.config.publicUrl}/usage?range=${req.query.range}`,
        parent: `${deps.config.publicUrl}/project`,
      }),
  );
};
