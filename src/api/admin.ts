import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { arrayPage } from '../db/paginate.js';
import { AppError } from '../errors.js';
import { refuseCrossSite, requireSession, sessionToken } from '../http/auth.js';
import { listBody, objectBody } from '../http/envelope.js';
import { IdParams, errorResponses, listEnvelope, objectEnvelope, pageQuery, plainPageQuery } from '../http/schemas.js';
import { AUDIT_ACTIONS, listAudit, userActor } from '../services/audit.js';
import {
  acceptInvitation,
  createInvitation,
  listInvitations,
  revokeInvitation,
} from '../services/people/invitations.js';
import {
  changeMemberRole,
  createOrg,
  deleteOrg,
  deleteProject,
  listMembers,
  removeMember,
  renameOrg,
  renameProject,
  requireRole,
} from '../services/people/org-admin.js';
import { findSession } from '../services/people/sessions.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../services/people/passwords.js';
import { DeletedSchema } from './file-schemas.js';
import { helpers, Name, OrgSchema, SignedInSchema } from './accounts.js';
import { ProjectSchema } from './project.js';

// Administration: organisations and their projects (create, rename, delete with the name typed
// as confirmation), members and roles, invitations, and the audit log. People act here with
// their session (owners and admins of the organisation; instance administrators everywhere).

const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
const Role = Type.Enum([...ROLES]);
const Id = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$' });

const MemberSchema = Type.Object({
  object: Type.Literal('member'),
  user_id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: Role,
  created: Type.String(),
});
const InvitationSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('invitation'),
  org_id: Type.String(),
  email: Type.String(),
  role: Role,
  status: Type.Enum(['pending', 'accepted', 'revoked', 'expired']),
  created_by: Type.Optional(Type.String()),
  created: Type.String(),
  expires: Type.String(),
  accepted: Type.Optional(Type.String()),
  revoked: Type.Optional(Type.String()),
  /** The one-time link (https://…/app/invite#token=…): only in the answer that makes it. */
  url: Type.Optional(Type.String()),
});
const AuditSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('audit_record'),
  org_id: Type.Optional(Type.String()),
  project_id: Type.Optional(Type.String()),
  /** One of the actions `action` filters by (auth.sign_in, key.created, member.role_changed, …). */
  action: Type.String(),
  actor: Type.Object({ type: Type.Enum(['user', 'key', 'anonymous', 'system']), id: Type.Optional(Type.String()) }),
  target: Type.Optional(Type.Object({ type: Type.String(), id: Type.Optional(Type.String()) })),
  /** What changed (names, roles, from/to); never a secret. */
  details: Type.Record(Type.String(), Type.Unknown()),
  ip: Type.Optional(Type.String()),
  created: Type.String(),
});

const NameBody = Type.Object({ name: Name(200) }, { additionalProperties: false });
const ConfirmBody = Type.Object(
  { confirm: Type.Optional(Type.String({ maxLength: 400 })) },
  { additionalProperties: false },
);
const ProjectParams = Type.Object({ id: Id, project_id: Id });
const MemberParams = Type.Object({ id: Id, user_id: Id });
const InvitationParams = Type.Object({ id: Id, invitation_id: Id });
const RoleBody = Type.Object({ role: Role }, { additionalProperties: false });
const InvitationBody = Type.Object(
  { email: Type.String({ format: 'email', maxLength: 254 }), role: Role },
  { additionalProperties: false },
);
const AcceptBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 100 }),
    name: Type.Optional(Name(200)),
    password: Type.Optional(Type.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX })),
  },
  { additionalProperties: false },
);
const AuditQuery = pageQuery(50, {
  action: Type.Optional(Type.Enum([...AUDIT_ACTIONS])),
  actor: Type.Optional(Id),
  created_after: Type.Optional(Type.String({ format: 'date-time' })),
  created_before: Type.Optional(Type.String({ format: 'date-time' })),
});

/** The filters a list was asked for, for its page links. */
function filtersOf(q: Record<string, unknown>, names: string[]): Record<string, string> {
  return Object.fromEntries(names.filter((n) => typeof q[n] === 'string').map((n) => [n, String(q[n])]));
}

export const adminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const publicOrigin = new URL(deps.config.publicUrl).origin;
  const { setCookie, links, signedInBody } = helpers(deps);

  // Accepting an invitation: signed in (the membership is added) or not (a new user is made).
  app.post(
    '/auth/accept-invitation',
    { schema: { body: AcceptBody, response: { 200: objectEnvelope(SignedInSchema), ...errorResponses } } },
    async (req, reply) => {
      refuseCrossSite(req, publicOrigin);
      // With a live session it is that session's write: same origin and its CSRF token.
      const token = sessionToken(req);
      const live = token ? await findSession(deps, token) : null;
      const signedIn = live ? await requireSession(deps, req) : null;
      const meta = { userAgent: req.headers['user-agent'], ip: req.ip };
      const { user, session } = await acceptInvitation(deps, req.body, signedIn?.user ?? null, meta);
      if (session) setCookie(reply, session.token);
      const s = session ? { user, session: session.session } : { user, session: signedIn!.session };
      return objectBody(req, await signedInBody(s), links('/auth/session'));
    },
  );

  await app.register(signedInAdminRoutes, { deps });
};

const signedInAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const base = deps.config.publicUrl;
  app.addHook('onRequest', async (req) => {
    req.signedIn = await requireSession(deps, req);
  });
  const me = (req: FastifyRequest) => req.signedIn!.user;
  const actor = (req: FastifyRequest) => userActor(me(req).id, req.ip);
  const org = (id: string) => `${base}/orgs/${id}`;
  const one = (self: string, parent: string) => ({ self, parent });
  // A deletion sent without a body lacks its confirmation (400 confirmation_required), like a wrong one.
  const noBodyIsEmpty = {
    preValidation: async (req: FastifyRequest) => {
      req.body ??= {};
    },
  };

  app.post(
    '/orgs',
    { schema: { body: NameBody, response: { 201: objectEnvelope(OrgSchema), ...errorResponses } } },
    async (req, reply) => {
      const made = await createOrg(deps, me(req), req.body.name.trim(), actor(req));
      return reply.code(201).send(objectBody(req, made, one(org(made.id), `${base}/orgs`)));
    },
  );

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

  const auditFilters = ['action', 'actor', 'created_after', 'created_before'];

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

  // Every record, those of no organisation too (failed sign-ins with unknown emails): instance administrators.
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
