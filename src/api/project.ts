import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { objectBody } from '../http/envelope.js';
import { errorResponses, objectEnvelope } from '../http/schemas.js';
import { projectAudit } from '../services/audit.js';
import { getProject, getWebhookSecret, rotateWebhookSecret, updateProject } from '../services/people/projects.js';
import { API_VERSIONS, LATEST_VERSION } from '../versions.js';
import { projectStats } from '../services/operations/project-stats.js';
import { TaskSchema } from './task-schemas.js';

export const ProjectSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('project'),
  org_id: Type.String(),
  name: Type.String(),
  require_signed_delivery: Type.Boolean(),
  /** The API version of requests that name none (Accept-Version). */
  api_version: Type.Enum([...API_VERSIONS]),
  created: Type.String(),
});

const PatchBody = Type.Object(
  {
    require_signed_delivery: Type.Optional(Type.Boolean()),
    api_version: Type.Optional(Type.Enum([...API_VERSIONS, 'latest'])),
  },
  { additionalProperties: false },
);
const StatsSchema = Type.Object({
  object: Type.Literal('project_stats'),
  media: Type.Integer(),
  files: Type.Integer(),
  storage_bytes: Type.Integer(),
  tasks_today: Type.Integer(),
  failed_24h: Type.Integer(),
  recent_failures: Type.Array(TaskSchema),
});
const SecretSchema = Type.Object({
  object: Type.Literal('webhook_secret'),
  secret: Type.String(),
  previous_secret_expires: Type.Optional(Type.String()),
});

/** The key's project: settings, and the secret that signs its webhooks (Standard Webhooks whsec_…). */
export const projectRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const base = deps.config.publicUrl;
  const links = { self: `${base}/project`, parent: base };
  const secretLinks = { self: `${base}/project/webhook-secret`, parent: `${base}/project` };

  app.get(
    '/project',
    { schema: { response: { 200: objectEnvelope(ProjectSchema), ...errorResponses } } },
    async (req) => objectBody(req, await getProject(deps, req.auth!.projectId), links),
  );

  app.patch(
    '/project',
    {
      schema: {
        body: PatchBody,
        response: { 200: objectEnvelope(ProjectSchema), ...errorResponses },
      },
    },
    async (req) => {
      const { api_version, ...rest } = req.body;
      const patch = {
        ...rest,
        ...(api_version ? { api_version: api_version === 'latest' ? LATEST_VERSION : api_version } : {}),
      };
      return objectBody(
        req,
        await updateProject(deps, req.auth!.projectId, patch, projectAudit(req.auth!, req.ip)),
        links,
      );
    },
  );

  app.get(
    '/project/stats',
    { schema: { response: { 200: objectEnvelope(StatsSchema), ...errorResponses } } },
    async (req) =>
      objectBody(req, await projectStats(deps, req.auth!.projectId), {
        self: `${base}/project/stats`,
        parent: `${base}/project`,
      }),
  );

  app.get(
    '/project/webhook-secret',
    { schema: { response: { 200: objectEnvelope(SecretSchema), ...errorResponses } } },
    async (req) => objectBody(req, await getWebhookSecret(deps, req.auth!.projectId), secretLinks),
  );

  app.post(
    '/project/webhook-secret/rotate',
    { schema: { response: { 200: objectEnvelope(SecretSchema), ...errorResponses } } },
    async (req) =>
      objectBody(
        req,
        await rotateWebhookSecret(deps, req.auth!.projectId, projectAudit(req.auth!, req.ip)),
        secretLinks,
      ),
  );
};
