import { arrayPage } from '../db/paginate.js';
import { AppError } from '../errors.js';
import { listBody, objectBody } from '../http/envelope.js';
import { errorResponses, IdParams, listEnvelope, objectEnvelope, plainPageQuery } from '../http/schemas.js';
import { listAudit } from '../services/audit.js';
import { createInvitation, listInvitations, revokeInvitation } from '../services/people/invitations.js';
import { changeMemberRole, listMembers, removeMember, requireRole } from '../services/people/org-admin.js';
import {
  AuditQuery,
  AuditSchema,
  InvitationBody,
  InvitationParams,
  InvitationSchema,
  MemberParams,
  MemberSchema,
  RoleBody,
} from './admin-schemas.js';
import type { AdminRoute } from './admin-route.js';
import { DeletedSchema } from './file-schemas.js';

// An organisation's people: its members and their roles, its invitations, and the audit log.

/** The filters a list was asked for, for its page links. */
function filtersOf(q: Record<string, unknown>, names: string[]): Record<string, string> {
  return Object.fromEntries(names.filter((n) => typeof q[n] === 'string').map((n) => [n, String(q[n])]));
}
const auditFilters = ['action', 'actor', 'created_after', 'created_before'];

export const listMembersRoute: AdminRoute = (app, { deps, me, org }) => {
  app.get(
    '/orgs/:id/members',
    {
      schema: {
        params: IdParams,
        querystring: plainPageQuery(50),
        response: { 200: listEnvelope(MemberSchema), ...errorResponses },
      },
    },
    async (req) =>
      listBody(
        req,
        `${org(req.params.id)}/members`,
        arrayPage(await listMembers(deps, me(req), req.params.id), req.query),
      ),
  );
};

export const changeMemberRoleRoute: AdminRoute = (app, { deps, me, actor, org, one }) => {
  app.patch(
    '/orgs/:id/members/:user_id',
    {
      schema: {
        params: MemberParams,
        body: RoleBody,
        response: { 200: objectEnvelope(MemberSchema), ...errorResponses },
      },
    },
    async (req) => {
      const { id, user_id } = req.params;
      const member = await changeMemberRole(deps, me(req), id, user_id, req.body.role, actor(req));
      return objectBody(req, member, one(`${org(id)}/members/${user_id}`, `${org(id)}/members`));
    },
  );
};

export const removeMemberRoute: AdminRoute = (app, { deps, me, actor, org, one }) => {
  app.delete(
    '/orgs/:id/members/:user_id',
    { schema: { params: MemberParams, response: { 200: objectEnvelope(DeletedSchema), ...errorResponses } } },
    async (req) => {
      const { id, user_id } = req.params;
      await removeMember(deps, me(req), id, user_id, actor(req));
      return objectBody(
        req,
        { id: user_id, object: 'member', deleted: true, message: `${user_id} removed from ${id}` },
        one(`${org(id)}/members/${user_id}`, `${org(id)}/members`),
      );
    },
  );
};

export const createInvitationRoute: AdminRoute = (app, { deps, me, actor, org, one }) => {
  app.post(
    '/orgs/:id/invitations',
    {
      schema: {
        params: IdParams,
        body: InvitationBody,
        response: { 201: objectEnvelope(InvitationSchema), ...errorResponses },
      },
    },
    async (req, reply) => {
      const id = req.params.id;
      const inv = await createInvitation(deps, me(req), id, req.body, actor(req));
      return reply
        .code(201)
        .send(objectBody(req, inv, one(`${org(id)}/invitations/${inv.id}`, `${org(id)}/invitations`)));
    },
  );
};

export const listInvitationsRoute: AdminRoute = (app, { deps, me, org }) => {
  app.get(
    '/orgs/:id/invitations',
    {
      schema: {
        params: IdParams,
        querystring: plainPageQuery(50),
        response: { 200: listEnvelope(InvitationSchema), ...errorResponses },
      },
    },
    async (req) =>
      listBody(
        req,
        `${org(req.params.id)}/invitations`,
        arrayPage(await listInvitations(deps, me(req), req.params.id), req.query),
      ),
  );
};

export const revokeInvitationRoute: AdminRoute = (app, { deps, me, actor, org, one }) => {
  app.delete(
    '/orgs/:id/invitations/:invitation_id',
    { schema: { params: InvitationParams, response: { 200: objectEnvelope(DeletedSchema), ...errorResponses } } },
    async (req) => {
      const { id, invitation_id } = req.params;
      await revokeInvitation(deps, me(req), id, invitation_id, actor(req));
      return objectBody(
        req,
        { id: invitation_id, object: 'invitation', deleted: true, message: `${invitation_id} revoked` },
        one(`${org(id)}/invitations/${invitation_id}`, `${org(id)}/invitations`),
      );
    },
  );
};

export const orgAuditRoute: AdminRoute = (app, { deps, me, org }) => {
  app.get(
    '/orgs/:id/audit',
    {
      schema: {
        params: IdParams,
        querystring: AuditQuery,
        response: { 200: listEnvelope(AuditSchema), ...errorResponses },
      },
    },
    async (req) => {
      const id = req.params.id;
      await requireRole(deps.db, me(req), id, ['owner', 'admin'], 'read the audit log');
      const { page, limit, ...filter } = req.query;
      const list = await listAudit(deps, id, filter, { page, limit });
      return listBody(req, `${org(id)}/audit`, list, filtersOf(req.query, auditFilters));
    },
  );
};

// Every record, those of no organisation too (failed sign-ins with unknown emails): instance administrators.
export const auditRoute: AdminRoute = (app, { deps, base, me }) => {
  app.get(
    '/audit',
    { schema: { querystring: AuditQuery, response: { 200: listEnvelope(AuditSchema), ...errorResponses } } },
    async (req) => {
      if (me(req).is_admin !== 1)
        throw new AppError('insufficient_role', 'only instance administrators read the whole audit log');
      const { page, limit, ...filter } = req.query;
      const list = await listAudit(deps, null, filter, { page, limit });
      return listBody(req, `${base}/audit`, list, filtersOf(req.query, auditFilters));
    },
  );
};
