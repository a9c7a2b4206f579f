import type { FastifyRequest } from 'fastify';
import { errorResponses, IdParams, objectEnvelope } from '../http/schemas.js';
import { objectBody } from '../http/envelope.js';
import { deleteOrg, deleteProject, createOrg, renameOrg, renameProject } from '../services/people/org-admin.js';
import { OrgSchema } from './accounts.js';
import { ConfirmBody, NameBody, ProjectParams } from './admin-schemas.js';
import type { AdminRoute } from './admin-route.js';
import { DeletedSchema } from './file-schemas.js';
import { ProjectSchema } from './project.js';

// Organisations and their projects: create, rename, and delete with the name typed as confirmation.

// A deletion sent without a body lacks its confirmation (400 confirmation_required), like a wrong one.
const noBodyIsEmpty = {
  preValidation: async (req: FastifyRequest) => {
    req.body ??= {};
  },
};

export const createOrgRoute: AdminRoute = (app, { deps, base, me, actor, org, one }) => {
  app.post(
    '/orgs',
    { schema: { body: NameBody, response: { 201: objectEnvelope(OrgSchema), ...errorResponses } } },
    async (req, reply) => {
      const made = await createOrg(deps, me(req), req.body.name.trim(), actor(req));
      return reply.code(201).send(objectBody(req, made, one(org(made.id), `${base}/orgs`)));
    },
  );
};

export const renameOrgRoute: AdminRoute = (app, { deps, base, me, actor, org, one }) => {
  app.patch(
    '/orgs/:id',
    { schema: { params: IdParams, body: NameBody, response: { 200: objectEnvelope(OrgSchema), ...errorResponses } } },
    async (req) =>
      objectBody(
        req,
        await renameOrg(deps, me(req), req.params.id, req.body.name.trim(), actor(req)),
        one(org(req.params.id), `${base}/orgs`),
      ),
  );
};

export const deleteOrgRoute: AdminRoute = (app, { deps, base, me, actor, org, one }) => {
  app.delete(
    '/orgs/:id',
    {
      ...noBodyIsEmpty,
      schema: {
        params: IdParams,
        body: ConfirmBody,
        response: { 200: objectEnvelope(DeletedSchema), ...errorResponses },
      },
    },
    async (req) => {
      const id = req.params.id;
      await deleteOrg(deps, me(req), id, req.body.confirm, actor(req));
      return objectBody(
        req,
        { id, object: 'org', deleted: true, message: `${id} deleted` },
        one(org(id), `${base}/orgs`),
      );
    },
  );
};

export const renameProjectRoute: AdminRoute = (app, { deps, me, actor, org, one }) => {
  app.patch(
    '/orgs/:id/projects/:project_id',
    {
      schema: {
        params: ProjectParams,
        body: NameBody,
        response: { 200: objectEnvelope(ProjectSchema), ...errorResponses },
      },
    },
    async (req) => {
      const { id, project_id } = req.params;
      const project = await renameProject(deps, me(req), id, project_id, req.body.name.trim(), actor(req));
      return objectBody(req, project, one(`${org(id)}/projects/${project_id}`, `${org(id)}/projects`));
    },
  );
};

export const deleteProjectRoute: AdminRoute = (app, { deps, me, actor, org, one }) => {
  app.delete(
    '/orgs/:id/projects/:project_id',
    {
      ...noBodyIsEmpty,
      schema: {
        params: ProjectParams,
        body: ConfirmBody,
        response: { 200: objectEnvelope(DeletedSchema), ...errorResponses },
      },
    },
    async (req) => {
      const { id, project_id } = req.params;
      await deleteProject(deps, me(req), id, project_id, req.body.confirm, actor(req));
      return objectBody(
        req,
        { id: project_id, object: 'project', deleted: true, message: `${project_id} deleted` },
        one(`${org(id)}/projects/${project_id}`, `${org(id)}/projects`),
      );
    },
  );
};
