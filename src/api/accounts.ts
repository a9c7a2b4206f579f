import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { arrayPage } from '../db/paginate.js';
import { AppError } from '../errors.js';
import { refuseCrossSite, requireSession, sessionToken, type SessionAuth } from '../http/auth.js';
import { listBody, objectBody } from '../http/envelope.js';
import { createSignInLimiter } from '../http/rate-limit.js';
import { IdParams, errorResponses, listEnvelope, objectEnvelope, plainPageQuery } from '../http/schemas.js';
import { createOrgProject, listOrgProjects, listOrgs, memberships } from '../services/people/orgs.js';
import { userActor } from '../services/audit.js';
import { findSession, listSessions, revokeSession, SESSION_COOKIE } from '../services/people/sessions.js';
import { caFileForClients } from '../tls/ca-file.js';
import { changePassword, setUp, setupRequired, signIn, signOut, updateAccount } from '../services/people/users.js';
import { toUserObject } from '../shapes/people.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../services/people/passwords.js';
import { DeletedSchema } from './file-schemas.js';
import { KeySchema } from './keys.js';
import { ProjectSchema } from './project.js';

const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;

export const UserSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('user'),
  email: Type.String(),
  name: Type.String(),
  /** An instance administrator (the first owner). */
  is_admin: Type.Boolean(),
  theme: Type.Enum(['light', 'dark', 'system']),
  status: Type.Enum(['active', 'disabled']),
  created: Type.String(),
  last_sign_in: Type.Optional(Type.String()),
});
export const OrgSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('org'),
  name: Type.String(),
  role: Type.Enum([...ROLES]),
  created: Type.String(),
});
const SessionSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('session'),
  created: Type.String(),
  last_seen: Type.String(),
  expires: Type.String(),
  user_agent: Type.Optional(Type.String()),
  ip: Type.Optional(Type.String()),
  /** The session of this request. */
  current: Type.Boolean(),
});
export const SignedInSchema = Type.Object({
  object: Type.Literal('signed_in'),
  user: UserSchema,
  /** Send it as X-CSRF-Token with every POST, PATCH, PUT and DELETE of this session. */
  csrf_token: Type.String(),
  memberships: Type.Array(
    Type.Object({
      org: Type.Object({ id: Type.String(), name: Type.String() }),
      role: Type.Enum([...ROLES]),
      projects: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
    }),
  ),
});
const StatusSchema = Type.Object({
  object: Type.Literal('auth_status'),
  /** No user exists yet: open the setup URL printed in the server log. */
  setup_required: Type.Boolean(),
  /** POST /auth/sign-in takes an email and password (MEDIAD_PASSWORD_SIGN_IN). */
  password_sign_in: Type.Boolean(),
  /** The request carries a valid session cookie (the cookie is HttpOnly: the web app asks here, without a 401). */
  signed_in: Type.Boolean(),
  /** Sign-in with an OpenID Connect provider, when set up: the button's name and where it goes. */
  oidc: Type.Optional(Type.Object({ name: Type.String(), start_url: Type.String() })),
  /**
   * The server's local certificate authority, when it uses one (not with MEDIAD_TLS_CERT): the file
   * clients on its machine pass (`--cacert`, NODE_EXTRA_CA_CERTS) and where it can be downloaded.
   */
  local_ca: Type.Optional(Type.Object({ file: Type.String(), url: Type.String() })),
});
const SetupSchema = Type.Object({
  object: Type.Literal('setup'),
  user: UserSchema,
  org: OrgSchema,
  project: ProjectSchema,
  key: KeySchema,
  csrf_token: Type.String(),
});
export const OkSchema = Type.Object({ object: Type.Literal('ok'), message: Type.String() });

const Email = Type.String({ format: 'email', maxLength: 254 });
const Password = Type.String({ minLength: 1, maxLength: PASSWORD_MAX });
export const NewPassword = Type.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX });
export const Name = (max: number) => Type.String({ minLength: 1, maxLength: max, pattern: '\\S' });
const SetupBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 100 }),
    email: Email,
    name: Name(200),
    password: NewPassword,
    org: Name(200),
    project: Name(200),
  },
  { additionalProperties: false },
);
const SignInBody = Type.Object(
  { email: Type.String({ maxLength: 254 }), password: Password },
  { additionalProperties: false },
);
const AccountPatch = Type.Object(
  { name: Type.Optional(Name(200)), theme: Type.Optional(Type.Enum(['light', 'dark', 'system'])) },
  { additionalProperties: false },
);
const PasswordBody = Type.Object(
  { current_password: Password, new_password: NewPassword },
  { additionalProperties: false },
);
const ProjectBody = Type.Object({ name: Name(200) }, { additionalProperties: false });

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user of the account routes. */
    signedIn?: SessionAuth;
  }
}

/**
 * Accounts: first-run setup, sign-in and out, the signed-in user's account and sessions, their
 * organisations and projects. These act on a person rather than a project, so they sit outside
 * the project's authentication (the web application calls them with its session cookie).
 */
/** The Set-Cookie of a new session (password and OpenID Connect sign-in alike). */
export function sessionCookie(deps: Deps, token: string): string {
  // __Host-: Secure, Path=/ and no Domain, or the browser drops it. Lax: sent on top-level
  // navigation from elsewhere (a link to a media page works) but not on other sites' posts.
  const maxAge = Math.floor(deps.config.accounts.sessionMaxMs / 1000);
  return `${SESSION_COOKIE}=${token}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=${maxAge}`;
}

export function helpers(deps: Deps) {
  const base = deps.config.publicUrl;
  return {
    setCookie: (reply: FastifyReply, token: string) => reply.header('set-cookie', sessionCookie(deps, token)),
    clearCookie: (reply: FastifyReply) =>
      reply.header('set-cookie', `${SESSION_COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0`),
    links: (path: string, parent = base) => ({ self: `${base}${path}`, parent }),
    ok: (message: string) => ({ object: 'ok' as const, message }),
    signedInBody: async (s: SessionAuth) => ({
      object: 'signed_in' as const,
      user: toUserObject(s.user),
      csrf_token: s.session.csrf_token,
      memberships: await memberships(deps, s.user.id),
    }),
  };
}

export const accountRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const publicOrigin = new URL(deps.config.publicUrl).origin;
  const limitSignIn = createSignInLimiter(deps);
  const meta = (req: FastifyRequest) => ({ userAgent: req.headers['user-agent'], ip: req.ip });
  const { setCookie, clearCookie, links, ok, signedInBody } = helpers(deps);
  const caFile = caFileForClients(deps.config);

  app.get(
    '/auth/status',
    { schema: { response: { 200: objectEnvelope(StatusSchema), ...errorResponses } } },
    async (req) => {
      const token = sessionToken(req);
      const signedIn = token ? (await findSession(deps, token)) !== null : false;
      return objectBody(
        req,
        {
          object: 'auth_status' as const,
          setup_required: await setupRequired(deps),
          password_sign_in: deps.config.accounts.passwordSignIn,
          signed_in: signedIn,
          ...(deps.config.oidc
            ? { oidc: { name: deps.config.oidc.name, start_url: `${deps.config.publicUrl}/auth/oidc/start` } }
            : {}),
          ...(caFile ? { local_ca: { file: caFile, url: `${deps.config.publicUrl}/ca.crt` } } : {}),
        },
        links('/auth/status'),
      );
    },
  );

  app.post(
    '/auth/setup',
    { schema: { body: SetupBody, response: { 201: objectEnvelope(SetupSchema), ...errorResponses } } },
    async (req, reply) => {
      refuseCrossSite(req, publicOrigin);
      const { session, ...made } = await setUp(deps, req.body, meta(req));
      setCookie(reply, session.token);
      const body = { object: 'setup' as const, ...made, csrf_token: session.session.csrf_token };
      return reply.code(201).send(objectBody(req, body, links('/auth/setup')));
    },
  );

  app.post(
    '/auth/sign-in',
    { schema: { body: SignInBody, response: { 200: objectEnvelope(SignedInSchema), ...errorResponses } } },
    async (req, reply) => {
      if (!deps.config.accounts.passwordSignIn)
        throw new AppError(
          'password_sign_in_disabled',
          `password sign-in is turned off here: sign in with ${deps.config.oidc?.name ?? 'single sign-on'} (GET /auth/oidc/start)`,
        );
      refuseCrossSite(req, publicOrigin);
      await limitSignIn(req, req.body.email);
      // The session the browser held before ends: a session id never survives a sign-in.
      const previous = sessionToken(req);
      const before = previous ? await findSession(deps, previous) : null;
      const { user, session, token } = await signIn(
        deps,
        req.body.email,
        req.body.password,
        meta(req),
        before?.session.id,
      );
      setCookie(reply, token);
      return objectBody(req, await signedInBody({ user, session }), links('/auth/session'));
    },
  );

  // Signing out without a session is not an error: the cookie is cleared either way.
  app.post(
    '/auth/sign-out',
    { schema: { response: { 200: objectEnvelope(OkSchema), ...errorResponses } } },
    async (req, reply) => {
      if (sessionToken(req)) {
        const s = await requireSession(deps, req).catch(() => null);
        if (s) await signOut(deps, s.user.id, s.session.id, false, req.ip);
      }
      clearCookie(reply);
      return objectBody(req, ok('signed out'), links('/auth/sign-out'));
    },
  );

  await app.register(signedInRoutes, { deps });
};

/** What a signed-in user does with their own account, sessions and organisations. */
const signedInRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (signedIn, { deps }) => {
  const base = deps.config.publicUrl;
  const { links, ok, signedInBody, clearCookie } = helpers(deps);
  signedIn.addHook('onRequest', async (req) => {
    req.signedIn = await requireSession(deps, req);
  });
  const me = (req: FastifyRequest) => req.signedIn!;

  signedIn.post(
    '/auth/sign-out-everywhere',
    { schema: { response: { 200: objectEnvelope(OkSchema), ...errorResponses } } },
    async (req, reply) => {
      await signOut(deps, me(req).user.id, me(req).session.id, true, req.ip);
      clearCookie(reply);
      return objectBody(req, ok('every session of yours ended'), links('/auth/sign-out-everywhere'));
    },
  );

  signedIn.get(
    '/auth/session',
    { schema: { response: { 200: objectEnvelope(SignedInSchema), ...errorResponses } } },
    async (req) => objectBody(req, await signedInBody(me(req)), links('/auth/session')),
  );

  signedIn.patch(
    '/account',
    { schema: { body: AccountPatch, response: { 200: objectEnvelope(UserSchema), ...errorResponses } } },
    async (req) => objectBody(req, await updateAccount(deps, me(req).user.id, req.body), links('/account')),
  );

  signedIn.post(
    '/account/password',
    { schema: { body: PasswordBody, response: { 200: objectEnvelope(OkSchema), ...errorResponses } } },
    async (req) => {
      const s = me(req);
      await changePassword(deps, s.user.id, req.body.current_password, req.body.new_password, s.session.id, req.ip);
      return objectBody(
        req,
        ok('password changed; your other sessions ended'),
        links('/account/password', `${base}/account`),
      );
    },
  );

  signedIn.get(
    '/account/sessions',
    { schema: { querystring: plainPageQuery(20), response: { 200: listEnvelope(SessionSchema), ...errorResponses } } },
    async (req) => {
      const s = me(req);
      const all = await listSessions(deps, s.user.id, s.session.id);
      return listBody(req, `${base}/account/sessions`, arrayPage(all, req.query));
    },
  );

  signedIn.delete(
    '/account/sessions/:id',
    { schema: { params: IdParams, response: { 200: objectEnvelope(DeletedSchema), ...errorResponses } } },
    async (req) => {
      const id = req.params.id;
      await revokeSession(deps, me(req).user.id, id);
      return objectBody(
        req,
        { id, object: 'session', deleted: true, message: `${id} ended` },
        links(`/account/sessions/${id}`, `${base}/account/sessions`),
      );
    },
  );

  signedIn.get(
    '/orgs',
    { schema: { querystring: plainPageQuery(20), response: { 200: listEnvelope(OrgSchema), ...errorResponses } } },
    async (req) => listBody(req, `${base}/orgs`, arrayPage(await listOrgs(deps, me(req).user.id), req.query)),
  );

  signedIn.get(
    '/orgs/:id/projects',
    {
      schema: {
        params: IdParams,
        querystring: plainPageQuery(20),
        response: { 200: listEnvelope(ProjectSchema), ...errorResponses },
      },
    },
    async (req) => {
      const all = await listOrgProjects(deps, me(req).user.id, req.params.id);
      return listBody(req, `${base}/orgs/${req.params.id}/projects`, arrayPage(all, req.query));
    },
  );

  signedIn.post(
    '/orgs/:id/projects',
    {
      schema: {
        params: IdParams,
        body: ProjectBody,
        response: { 201: objectEnvelope(ProjectSchema), ...errorResponses },
      },
    },
    async (req, reply) => {
      const project = await createOrgProject(
        deps,
        me(req).user.id,
        req.params.id,
        req.body.name.trim(),
        userActor(me(req).user.id, req.ip),
      );
      return reply
        .code(201)
        .send(objectBody(req, project, links(`/orgs/${req.params.id}/projects`, `${base}/orgs/${req.params.id}`)));
    },
  );
};
