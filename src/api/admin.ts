import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { refuseCrossSite, requireSession, sessionToken } from '../http/auth.js';
import { objectBody } from '../http/envelope.js';
import { errorResponses, objectEnvelope } from '../http/schemas.js';
import { userActor } from '../services/audit.js';
import { acceptInvitation } from '../services/people/invitations.js';
import { findSession } from '../services/people/sessions.js';
import { helpers, SignedInSchema } from './accounts.js';
import {
  createOrgRoute,
  deleteOrgRoute,
  deleteProjectRoute,
  renameOrgRoute,
  renameProjectRoute,
} from './admin-orgs.js';
import {
  auditRoute,
  changeMemberRoleRoute,
  createInvitationRoute,
  listInvitationsRoute,
  listMembersRoute,
  orgAuditRoute,
  removeMemberRoute,
  revokeInvitationRoute,
} from './admin-people.js';
import type { AdminContext, AdminRoute } from './admin-route.js';
import { AcceptBody } from './admin-schemas.js';

// Administration: organisations and their projects (create, rename, delete with the name typed
// as confirmation), members and roles, invitations, and the audit log. People act here with
// their session (owners and admins of the organisation; instance administrators everywhere).
// Each signed-in route is a named handler in the table below; the services decide who may do what.

/** The routes that need a session, in the order they are registered. */
const ADMIN_ROUTES: AdminRoute[] = [
  createOrgRoute,
  renameOrgRoute,
  deleteOrgRoute,
  renameProjectRoute,
  deleteProjectRoute,
  listMembersRoute,
  changeMemberRoleRoute,
  removeMemberRoute,
  createInvitationRoute,
  listInvitationsRoute,
  revokeInvitationRoute,
  orgAuditRoute,
  auditRoute,
];

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
  app.addHook('onRequest', async (req) => {
    req.signedIn = await requireSession(deps, req);
  });
  const base = deps.config.publicUrl;
  const me = (req: FastifyRequest) => req.signedIn!.user;
  const context: AdminContext = {
    deps,
    base,
    me,
    actor: (req) => userActor(me(req).id, req.ip),
    org: (id) => `${base}/orgs/${id}`,
    one: (self, parent) => ({ self, parent }),
  };
  for (const route of ADMIN_ROUTES) route(app, context);
};
