import assert from 'node:assert/strict';
import type { ApiResponse, TestServer } from './server.js';

// Sessions as the web application holds them, for the administration and audit tests.

export const PASSWORD = 'correct horse battery';

export interface Session {
  cookie: string;
  csrf: string;
}

/** The session cookie an answer sets (name=value only, as a browser sends it back). */
export function cookieOf(res: ApiResponse): string {
  const header = res.headers['set-cookie'];
  assert.ok(header, 'a session cookie is set');
  return header.split(';')[0]!;
}

export async function signIn(t: TestServer, email: string, password = PASSWORD): Promise<Session> {
  const res = await t.call('POST', '/auth/sign-in', { body: { email, password } });
  assert.equal(res.status, 200, res.text);
  return { cookie: cookieOf(res), csrf: res.json.data.csrf_token };
}

/** Headers of the web application's request: the cookie, the project, and for writes the CSRF token from this origin. */
export function as(
  t: TestServer,
  s: Session,
  opts: { project?: string; write?: boolean } = {},
): Record<string, string> {
  return {
    cookie: s.cookie,
    ...(opts.project ? { 'x-mediad-project': opts.project } : {}),
    ...(opts.write ? { 'x-csrf-token': s.csrf, origin: t.base } : {}),
  };
}

/** A write with a session: the body, and the headers it needs. */
export function write(t: TestServer, s: Session, body?: unknown, project?: string) {
  return { headers: as(t, s, { project, write: true }), ...(body === undefined ? {} : { body }) };
}

export interface Owner {
  session: Session;
  userId: string;
  orgId: string;
  projectId: string;
  key: string;
}

/** First-run setup through the link the server logged: the first owner (an instance administrator). */
export async function setUpOwner(t: TestServer, email = 'ada@example.com', org = 'Acme'): Promise<Owner> {
  const token = new URLSearchParams(new URL(t.server.setupUrl!).hash.slice(1)).get('token')!;
  const res = await t.call('POST', '/auth/setup', {
    body: { token, email, name: 'Ada', password: PASSWORD, org, project: 'Web' },
  });
  assert.equal(res.status, 201, res.text);
  const d = res.json.data;
  return {
    session: { cookie: cookieOf(res), csrf: d.csrf_token },
    userId: d.user.id,
    orgId: d.org.id,
    projectId: d.project.id,
    key: d.key.key,
  };
}

/** The token of an invitation's link (`…/app/invite#token=…`). */
export function tokenOf(url: string): string {
  const u = new URL(url);
  assert.equal(u.pathname, '/app/invite');
  return new URLSearchParams(u.hash.slice(1)).get('token')!;
}

/** Invites `email` with `role` and accepts as a new user; returns their session and id. */
export async function invite(
  t: TestServer,
  by: Session,
  orgId: string,
  email: string,
  role: string,
): Promise<{ session: Session; userId: string }> {
  const inv = await t.call('POST', `/orgs/${orgId}/invitations`, write(t, by, { email, role }));
  assert.equal(inv.status, 201, inv.text);
  const res = await t.call('POST', '/auth/accept-invitation', {
    body: { token: tokenOf(inv.json.data.url), name: email.split('@')[0], password: PASSWORD },
  });
  assert.equal(res.status, 200, res.text);
  return { session: { cookie: cookieOf(res), csrf: res.json.data.csrf_token }, userId: res.json.data.user.id };
}
