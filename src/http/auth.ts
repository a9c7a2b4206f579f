import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { checkAccess, familyOf, type AuthContext } from '../services/access.js';
import { authenticate } from '../services/people/keys.js';
import { roleInProject } from '../services/people/orgs.js';
import { findSession, SESSION_COOKIE } from '../services/people/sessions.js';
import type { SessionsTable, UsersTable } from '../db/schema.js';
import { asApiVersion } from '../versions.js';

// Who a request is. The API takes an API key (Authorization: Bearer mdk_…), as every client does,
// or the web application's session cookie. A session names the project it acts on in
// X-Mediad-Project (checked against the user's membership: another organisation's project is a
// 404), and an unsafe request with a session must come from this origin and carry the session's
// CSRF token: a cookie is sent by the browser on its own, a custom header is not.

const CHALLENGE = 'Bearer realm="mediad"';
export const PROJECT_HEADER = 'x-mediad-project';
export const CSRF_HEADER = 'x-csrf-token';
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Runs after a request is authenticated, in the same hook (one hook per request is cheaper than
 * two); it may answer at once (the in-memory rate limit) or with a promise (Redis, PostgreSQL).
 */
export type AfterAuth = (req: FastifyRequest, reply: FastifyReply) => void | Promise<void>;

/** The session cookie's token, if the request has one. */
export function sessionToken(req: FastifyRequest): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * A browser's request made by another site's page: Sec-Fetch-Site says so, or an Origin names
 * another origin (either header is enough to refuse: defence in depth). A client that is not a
 * browser sends neither.
 */
function crossSite(req: FastifyRequest, publicOrigin: string): boolean {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== publicOrigin) return true;
  const site = req.headers['sec-fetch-site'];
  return site !== undefined && site !== 'same-origin' && site !== 'none';
}

/** Sign-in and setup are refused to other sites' pages (login CSRF: signing a victim in to the attacker's account). */
export function refuseCrossSite(req: FastifyRequest, publicOrigin: string): void {
  if (crossSite(req, publicOrigin))
    throw new AppError('csrf_failed', 'this request came from another site; sign in on this site');
}

/** An unsafe request with a session: from this origin (a browser says so) and with the session's CSRF token. */
function checkCsrf(req: FastifyRequest, publicOrigin: string, session: SessionsTable): void {
  if (SAFE.has(req.method)) return;
  // Same origin, told by the browser: an Origin, when sent, names this origin, and Sec-Fetch-Site,
  // when sent, says same-origin; one of them must be there.
  const site = req.headers['sec-fetch-site'];
  const origin = req.headers.origin;
  const sameOrigin =
    (site !== undefined || origin !== undefined) &&
    (site === undefined || site === 'same-origin') &&
    (origin === undefined || origin === publicOrigin);
  if (!sameOrigin || req.headers[CSRF_HEADER] !== session.csrf_token) {
    throw new AppError(
      'csrf_failed',
      'a request signed in with a session must come from this site and send its X-CSRF-Token (GET /auth/session gives it)',
    );
  }
}

export interface SessionAuth {
  session: SessionsTable;
  user: UsersTable;
}

/** The signed-in user of a request, or a 401 (with the same message whether the cookie is missing, unknown or expired). */
export async function requireSession(deps: Deps, req: FastifyRequest): Promise<SessionAuth> {
  const token = sessionToken(req);
  const found = token ? await findSession(deps, token) : null;
  if (!found)
    throw new AppError('unauthorized', 'you are not signed in (or your session ended): sign in again', {
      headers: { 'www-authenticate': CHALLENGE },
    });
  checkCsrf(req, new URL(deps.config.publicUrl).origin, found.session);
  return found;
}

async function sessionContext(deps: Deps, req: FastifyRequest, s: SessionAuth): Promise<AuthContext> {
  const header = req.headers[PROJECT_HEADER];
  const projectId = Array.isArray(header) ? header[0] : header;
  if (!projectId)
    throw new AppError(
      'project_required',
      'name the project this request acts on in the X-Mediad-Project header (GET /orgs lists yours)',
    );
  const membership = await roleInProject(deps.db, s.user.id, projectId);
  if (!membership) throw new AppError('not_found', `no project ${projectId} of yours`);
  const project = await deps.db
    .selectFrom('projects')
    .select('api_version')
    .where('id', '=', projectId)
    .executeTakeFirstOrThrow();
  return {
    orgId: membership.orgId,
    projectId,
    apiVersion: asApiVersion(project.api_version),
    principal: {
      type: 'session',
      userId: s.user.id,
      sessionId: s.session.id,
      role: membership.role,
      csrfToken: s.session.csrf_token,
    },
  };
}

type Found = AuthContext | null | Promise<AuthContext | null>;

const invalidKey = () =>
  new AppError(
    'unauthorized',
    'invalid, revoked, expired or paused API key; check the Authorization header is "Bearer <key>" with a current key',
    { headers: { 'www-authenticate': `${CHALLENGE}, error="invalid_token"` } },
  );

/**
 * Every route of the scope this is registered in acts on a project, as an API key or a session;
 * the route's family (services/access.ts) decides what the key's scopes or the user's role allow.
 * `after` (the rate limiter) runs once req.auth is set.
 */
export function registerAuth(
  app: FastifyInstance,
  deps: Deps,
  after: AfterAuth | null = null,
  /** Other bearer tokens this scope takes (upload tokens on /uploads/tus), tried before API keys. */
  otherTokens?: (token: string) => Promise<AuthContext | null>,
): void {
  /** Who the request is: at once for a key verified moments ago (the hot path), else a promise. */
  const identify = (req: FastifyRequest): Found => {
    const header = req.headers.authorization;
    if (header) {
      const token = /^Bearer ([^\s]+)$/.exec(header)?.[1];
      if (!token) return null;
      if (otherTokens) return otherTokens(token).then((auth) => auth ?? authenticate(deps, token));
      return authenticate(deps, token);
    }
    if (sessionToken(req)) return requireSession(deps, req).then((s) => sessionContext(deps, req, s));
    throw new AppError(
      'unauthorized',
      'missing API key: send the header "Authorization: Bearer <key>" (create a key with `mediad keys create` or in the web application)',
      { headers: { 'www-authenticate': CHALLENGE } },
    );
  };

  /** Sets req.auth, checks the route's family, runs `after`; what `after` returns (a promise or nothing). */
  const admit = (req: FastifyRequest, reply: FastifyReply, auth: AuthContext | null): void | Promise<void> => {
    if (!auth) throw invalidKey();
    req.auth = auth;
    // A request that names no version gets its project's default (PATCH /project {api_version}).
    req.apiVersion ??= auth.apiVersion;
    const family = familyOf(req.routeOptions.url ?? '');
    if (family)
      checkAccess(auth.principal, family, !SAFE.has(req.method) && req.routeOptions.config.readsOnly !== true);
    return after?.(req, reply);
  };

  // A callback hook, not an async one: with a cached key and the in-memory rate limit nothing
  // here waits, and the promises an async hook chains (one per await) showed as a tenth of
  // GET /files/{id}'s CPU in the profile (docs/benchmarks.md, issue 26).
  app.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    let pending: void | Promise<void>;
    try {
      const found = identify(req);
      pending = found instanceof Promise ? found.then((auth) => admit(req, reply, auth)) : admit(req, reply, found);
    } catch (err) {
      done(err as Error);
      return;
    }
    if (pending instanceof Promise) pending.then(() => done(), done);
    else done();
  });
}
