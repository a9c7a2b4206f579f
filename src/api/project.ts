import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { objectBody } from '../http/envelope.js';
import { Nullable, errorResponses, objectEnvelope } from '../http/schemas.js';
import { getProject, getWebhookSecret, rotateWebhookSecret, updateProject } from '../services/projects.js';

const ProjectSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('project'),
  org_id: Type.String(),
  name: Type.String(),
  require_signed_delivery: Type.Boolean(),
  created: Type.String(),
});
const SecretSchema = Type.Object({
  object: Type.Literal('webhook_secret'),
  secret: Type.String(),
  previous_secret_expires: Nullable(Type.String()),
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
        body: Type.Object({ require_signed_delivery: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
        response: { 200: objectEnvelope(ProjectSchema), ...errorResponses },
      },
    },
    async (req) => objectBody(req, await updateProject(deps, req.auth!.projectId, req.body), links),
  );

  app.get(
    '/project/webhook-secret',
    { schema: { response: { 200: objectEnvelope(SecretSchema), ...errorResponses } } },
    async (req) => objectBody(req, await getWebhookSecret(deps, req.auth!.projectId), secretLinks),
  );

  app.post(
    '/project/webhook-secret/rotate',
    { schema: { response: { 200: objectEnvelope(SecretSchema), ...errorResponses } } },
    async (req) => objectBody(req, await rotateWebhookSecret(deps, req.auth!.projectId), secretLinks),
  );
};
