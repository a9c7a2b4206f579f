import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { createUserInOrg } from '../../src/services/people/users.js';
import { startTestServer, type ApiResponse, type TestServer } from '../helpers/server.js';
import { MEDIAD } from '../helpers/paths.js';

// People: first-run setup, sign-in and sessions (cookie, CSRF, rotation, expiry of other
// sessions), roles per organisation, organisations and projects, and the users CLI.

const PASSWORD = 'correct horse battery';

interface Session {
  cookie: string;
  csrf: string;
}

/** The session cookie an answer sets (name=value only, as a browser would send it back). */
function cookieOf(res: ApiResponse): string {
  const header = res.headers['set-cookie'];
  assert.ok(header, 'a session cookie is set');
  return header.split(';')[0]!;
}

async function signIn(
  t: TestServer,
  email: string,
  password = PASSWORD,
  headers: Record<string, string> = {},
): Promise<Session> {
  const res = await t.call('POST', '/auth/sign-in', { body: { email, password }, headers });
  assert.equal(res.status, 200, res.text);
  return { cookie: cookieOf(res), csrf: res.json.data.csrf_token };
}

/** Headers of the web application's request: the cookie, the project, and for writes the CSRF token from this origin. */
function as(t: TestServer, s: Session, projectId?: string, write = false): Record<string, string> {
  return {
    cookie: s.cookie,
    ...(projectId ? { 'x-mediad-project': projectId } : {}),
    ...(write ? { 'x-csrf-token': s.csrf, origin: t.base } : {}),
  };
}

describe('accounts: setup, sign-in, sessions, roles', () => {
  let t: TestServer;
  let owner: Session;
  let projectId: string;
  let orgId: string;
  let firstKey: string;

  before(async () => {
    t = await startTestServer({ MEDIAD_SIGN_IN_PER_MINUTE: '1000', MEDIAD_SIGN_IN_PER_MINUTE_PER_ADDRESS: '1000' });
  });
  after(() => t.stop());

  it('first run: the setup link makes the first owner, org, project, key and session, once', async () => {
    let status = await t.call('GET', '/auth/status');
    assert.equal(status.json.data.setup_required, true);
    assert.ok(t.server.setupUrl, 'serve announces a setup link while nobody is set up');
    const url = new URL(t.server.setupUrl);
    assert.equal(url.pathname, '/app/setup');
    const token = new URLSearchParams(url.hash.slice(1)).get('token')!;
    const body = { token, email: 'Ada@Example.com', name: 'Ada', password: PASSWORD, org: 'Acme', project: 'Web' };

    const wrong = await t.call('POST', '/auth/setup', { body: { ...body, token: 'x'.repeat(43) } });
    assert.equal(wrong.status, 401);
    const short = await t.call('POST', '/auth/setup', { body: { ...body, password: 'short' } });
    assert.equal(short.status, 400);
    assert.equal(short.json.error.code, 'validation_failed');
    const crossSite = await t.call('POST', '/auth/setup', { body, headers: { origin: 'https://evil.example' } });
    assert.equal(crossSite.status, 403);
    assert.equal(crossSite.json.error.code, 'csrf_failed');

    const res = await t.call('POST', '/auth/setup', { body });
    assert.equal(res.status, 201, res.text);
    const cookie = res.headers['set-cookie']!;
    assert.match(cookie, /^__Host-mediad_session=[A-Za-z0-9_-]{40,};/);
    for (const attr of ['Path=/', 'Secure', 'HttpOnly', 'SameSite=Lax'])
      assert.ok(cookie.includes(attr), `${attr} in ${cookie}`);
    assert.ok(!/Domain=/i.test(cookie));
    const d = res.json.data;
    assert.equal(d.user.email, 'ada@example.com', 'emails are kept lower-case');
    assert.equal(d.user.is_admin, true);
    assert.equal(d.org.role, 'owner');
    assert.equal(d.project.name, 'Web');
    assert.match(d.key.key, /^mdk_/);
    assert.deepEqual(d.key.scopes, ['full']);
    owner = { cookie: cookie.split(';')[0]!, csrf: d.csrf_token };
    projectId = d.project.id;
    orgId = d.org.id;
    firstKey = d.key.key;

    const files = await t.call('GET', '/files', { key: firstKey });
    assert.equal(files.status, 200, 'the first key works');
    const again = await t.call('POST', '/auth/setup', { body: { ...body, email: 'eve@example.com' } });
    assert.equal(again.status, 409);
    status = await t.call('GET', '/auth/status');
    assert.equal(status.json.data.setup_required, false);
  });

  it('a session acts on the project it names, among its memberships', async () => {
    const session = await t.call('GET', '/auth/session', { headers: as(t, owner) });
    assert.equal(session.status, 200);
    assert.equal(session.json.data.user.name, 'Ada');
    assert.equal(session.json.data.csrf_token, owner.csrf);
    assert.deepEqual(session.json.data.memberships, [
      { org: { id: orgId, name: 'Acme' }, role: 'owner', projects: [{ id: projectId, name: 'Web' }] },
    ]);

    const noProject = await t.call('GET', '/files', { headers: as(t, owner) });
    assert.equal(noProject.status, 400);
    assert.equal(noProject.json.error.code, 'project_required');
    const ok = await t.call('GET', '/media', { headers: as(t, owner, projectId) });
    assert.equal(ok.status, 200);
    assert.equal(ok.json.meta.project_id, projectId);
    const other = await t.key('other-org', 'p');
    const foreign = await t.call('GET', '/media', { headers: as(t, owner, other.project_id) });
    assert.equal(foreign.status, 404, "another organisation's project does not exist for this user");
    const none = await t.call('GET', '/auth/session');
    assert.equal(none.status, 401);
    const bogus = await t.call('GET', '/auth/session', {
      headers: { cookie: '__Host-mediad_session=' + 'A'.repeat(43) },
    });
    assert.equal(bogus.status, 401);
    const withKey = await t.call('GET', '/auth/session', { key: firstKey });
    assert.equal(withKey.status, 401, 'account routes take a session, not a key');
  });

  it('an unsafe request with a session needs this origin and the CSRF token; a key needs neither', async () => {
    const create = (headers: Record<string, string>) => t.call('POST', '/media', { body: { title: 'x' }, headers });
    const base = as(t, owner, projectId);
    const noToken = await create({ ...base, origin: t.base });
    assert.equal(noToken.status, 403);
    assert.equal(noToken.json.error.code, 'csrf_failed');
    const wrongToken = await create({ ...base, origin: t.base, 'x-csrf-token': 'nope' });
    assert.equal(wrongToken.status, 403);
    const noOrigin = await create({ ...base, 'x-csrf-token': owner.csrf });
    assert.equal(noOrigin.status, 403, 'a session write without Origin or Sec-Fetch-Site is refused');
    // A cross-origin form post: the browser sends the cookie (and can be made to send anything but the token).
    const crossOrigin = await create({ ...base, origin: 'https://evil.example', 'x-csrf-token': owner.csrf });
    assert.equal(crossOrigin.status, 403);
    const crossSite = await create({ ...base, 'sec-fetch-site': 'cross-site', 'x-csrf-token': owner.csrf });
    assert.equal(crossSite.status, 403);
    const sameSite = await create({ ...base, 'sec-fetch-site': 'same-site', 'x-csrf-token': owner.csrf });
    assert.equal(sameSite.status, 403, 'a sibling subdomain is another origin');

    // An Origin naming another site is refused even beside a same-origin Sec-Fetch-Site and the right token.
    const mismatched = await create({
      ...base,
      'sec-fetch-site': 'same-origin',
      origin: 'https://evil.example',
      'x-csrf-token': owner.csrf,
    });
    assert.equal(mismatched.status, 403, mismatched.text);
    assert.equal(mismatched.json.error.code, 'csrf_failed');
    const nullOrigin = await create({
      ...base,
      'sec-fetch-site': 'same-origin',
      origin: 'null',
      'x-csrf-token': owner.csrf,
    });
    assert.equal(nullOrigin.status, 403);

    const ok = await create({ ...base, 'sec-fetch-site': 'same-origin', 'x-csrf-token': owner.csrf });
    assert.equal(ok.status, 201, ok.text);
    const viaOrigin = await create(as(t, owner, projectId, true));
    assert.equal(viaOrigin.status, 201);
    const byKey = await t.call('POST', '/media', {
      key: firstKey,
      body: {},
      headers: { origin: 'https://evil.example' },
    });
    assert.equal(byKey.status, 201, 'API-key requests are unchanged');
  });

  it('sign-in: one answer for a wrong password and an unknown email; the session rotates', async () => {
    const wrong = await t.call('POST', '/auth/sign-in', {
      body: { email: 'ada@example.com', password: 'wrong password' },
    });
    const unknown = await t.call('POST', '/auth/sign-in', {
      body: { email: 'nobody@example.com', password: 'wrong password' },
    });
    assert.equal(wrong.status, 401);
    assert.equal(unknown.status, 401);
    assert.equal(wrong.json.error.code, 'invalid_credentials');
    assert.equal(wrong.json.error.message, unknown.json.error.message);
    assert.equal(wrong.headers['set-cookie'], undefined);
    const crossSite = await t.call('POST', '/auth/sign-in', {
      body: { email: 'ada@example.com', password: PASSWORD },
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(crossSite.status, 403, 'login CSRF: another site cannot sign a browser in');

    // Signing in with a cookie already held ends that session: ids never survive a sign-in.
    const first = await signIn(t, 'ADA@example.com');
    const second = await signIn(t, 'ada@example.com', PASSWORD, { cookie: first.cookie });
    assert.notEqual(first.cookie, second.cookie);
    assert.equal((await t.call('GET', '/auth/session', { headers: as(t, first) })).status, 401);
    assert.equal((await t.call('GET', '/auth/session', { headers: as(t, second) })).status, 200);
  });

  it('account: name and theme; sessions listed and revoked; sign out and sign out everywhere', async () => {
    const a = await signIn(t, 'ada@example.com');
    const b = await signIn(t, 'ada@example.com');
    const patched = await t.call('PATCH', '/account', {
      body: { theme: 'dark', name: 'Ada L.' },
      headers: as(t, a, undefined, true),
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json.data.theme, 'dark');
    assert.equal(patched.json.data.name, 'Ada L.');
    const badTheme = await t.call('PATCH', '/account', { body: { theme: 'neon' }, headers: as(t, a, undefined, true) });
    assert.equal(badTheme.status, 400);

    const list = await t.call('GET', '/account/sessions', { headers: as(t, a) });
    assert.equal(list.status, 200);
    const current = list.json.data.filter((s: any) => s.current);
    assert.equal(current.length, 1);
    const bSession = (await t.call('GET', '/account/sessions', { headers: as(t, b) })).json.data.find(
      (s: any) => s.current,
    );
    const revoked = await t.call('DELETE', `/account/sessions/${bSession.id}`, { headers: as(t, a, undefined, true) });
    assert.equal(revoked.status, 200);
    assert.equal((await t.call('GET', '/auth/session', { headers: as(t, b) })).status, 401);
    const again = await t.call('DELETE', `/account/sessions/${bSession.id}`, { headers: as(t, a, undefined, true) });
    assert.equal(again.status, 404);

    const signOut = await t.call('POST', '/auth/sign-out', { headers: as(t, a, undefined, true) });
    assert.equal(signOut.status, 200);
    assert.match(signOut.headers['set-cookie']!, /Max-Age=0/);
    assert.equal((await t.call('GET', '/auth/session', { headers: as(t, a) })).status, 401);

    const c = await signIn(t, 'ada@example.com');
    const d = await signIn(t, 'ada@example.com');
    const everywhere = await t.call('POST', '/auth/sign-out-everywhere', { headers: as(t, c, undefined, true) });
    assert.equal(everywhere.status, 200);
    for (const s of [c, d, owner])
      assert.equal((await t.call('GET', '/auth/session', { headers: as(t, s) })).status, 401);
    owner = await signIn(t, 'ada@example.com');
  });

  it('a password change needs the current one and ends the other sessions', async () => {
    const other = await signIn(t, 'ada@example.com');
    const wrong = await t.call('POST', '/account/password', {
      body: { current_password: 'not it at all', new_password: 'a new long password' },
      headers: as(t, owner, undefined, true),
    });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.json.error.code, 'invalid_credentials');
    const res = await t.call('POST', '/account/password', {
      body: { current_password: PASSWORD, new_password: 'a new long password' },
      headers: as(t, owner, undefined, true),
    });
    assert.equal(res.status, 200, res.text);
    assert.equal((await t.call('GET', '/auth/session', { headers: as(t, other) })).status, 401);
    assert.equal((await t.call('GET', '/auth/session', { headers: as(t, owner) })).status, 200);
    await signIn(t, 'ada@example.com', 'a new long password');
    const old = await t.call('POST', '/auth/sign-in', { body: { email: 'ada@example.com', password: PASSWORD } });
    assert.equal(old.status, 401);
    const back = await t.call('POST', '/account/password', {
      body: { current_password: 'a new long password', new_password: PASSWORD },
      headers: as(t, owner, undefined, true),
    });
    assert.equal(back.status, 200);
  });

  it('roles: a viewer reads, a member writes media but not keys or settings, an admin manages', async () => {
    const deps = t.server.runtime.deps;
    for (const [email, role] of [
      ['viewer@example.com', 'viewer'],
      ['member@example.com', 'member'],
      ['admin@example.com', 'admin'],
    ] as const) {
      await createUserInOrg(deps, { email, name: role, password: PASSWORD, org: 'Acme', role });
    }
    const viewer = await signIn(t, 'viewer@example.com');
    const member = await signIn(t, 'member@example.com');
    const admin = await signIn(t, 'admin@example.com');

    assert.equal((await t.call('GET', '/media', { headers: as(t, viewer, projectId) })).status, 200);
    const viewerWrite = await t.call('POST', '/media', { body: {}, headers: as(t, viewer, projectId, true) });
    assert.equal(viewerWrite.status, 403);
    assert.equal(viewerWrite.json.error.code, 'insufficient_role');
    assert.equal((await t.call('GET', '/keys', { headers: as(t, viewer, projectId) })).status, 403);

    assert.equal((await t.call('POST', '/media', { body: {}, headers: as(t, member, projectId, true) })).status, 201);
    assert.equal((await t.call('GET', '/keys', { headers: as(t, member, projectId) })).status, 403);
    const memberSettings = await t.call('PATCH', '/project', {
      body: { require_signed_delivery: false },
      headers: as(t, member, projectId, true),
    });
    assert.equal(memberSettings.status, 403);
    assert.equal(memberSettings.json.error.code, 'insufficient_role');
    const memberProject = await t.call('POST', `/orgs/${orgId}/projects`, {
      body: { name: 'Nope' },
      headers: as(t, member, undefined, true),
    });
    assert.equal(memberProject.status, 403);

    const adminKey = await t.call('POST', '/keys', { body: { name: 'ci' }, headers: as(t, admin, projectId, true) });
    assert.equal(adminKey.status, 201, adminKey.text);
    const adminUser = (await t.call('GET', '/auth/session', { headers: as(t, admin) })).json.data.user;
    assert.equal(adminKey.json.data.created_by, adminUser.id);
    assert.equal(
      (
        await t.call('PATCH', '/project', {
          body: { require_signed_delivery: false },
          headers: as(t, admin, projectId, true),
        })
      ).status,
      200,
    );
  });

  it('organisations and projects: listed for their members, created by owners and admins', async () => {
    const orgs = await t.call('GET', '/orgs', { headers: as(t, owner) });
    assert.equal(orgs.status, 200);
    assert.deepEqual(
      orgs.json.data.map((o: any) => [o.id, o.role]),
      [[orgId, 'owner']],
    );
    const created = await t.call('POST', `/orgs/${orgId}/projects`, {
      body: { name: 'Mobile' },
      headers: as(t, owner, undefined, true),
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.data.org_id, orgId);
    const dup = await t.call('POST', `/orgs/${orgId}/projects`, {
      body: { name: 'Mobile' },
      headers: as(t, owner, undefined, true),
    });
    assert.equal(dup.status, 409);
    const projects = await t.call('GET', `/orgs/${orgId}/projects`, { headers: as(t, owner) });
    assert.deepEqual(
      projects.json.data.map((p: any) => p.name),
      ['Web', 'Mobile'],
    );
    // The new project is the session's to act on at once.
    assert.equal((await t.call('GET', '/media', { headers: as(t, owner, created.json.data.id) })).json.meta.total, 0);
    const other = await t.key('yet-another-org', 'p');
    assert.equal((await t.call('GET', `/orgs/${other.org_id}/projects`, { headers: as(t, owner) })).status, 404);
  });
});

describe('sign-in limits', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ MEDIAD_SIGN_IN_PER_MINUTE: '3', MEDIAD_SIGN_IN_PER_MINUTE_PER_ADDRESS: '5' });
    for (const email of ['a@example.com', 'b@example.com'])
      await createUserInOrg(t.server.runtime.deps, {
        email,
        name: email,
        password: PASSWORD,
        org: 'Acme',
        role: 'viewer',
      });
  });
  after(() => t.stop());
  const attempt = (email: string, password = 'a wrong guess') =>
    t.call('POST', '/auth/sign-in', { body: { email, password } });

  it('per account, then per address: a 429 with Retry-After, even with the right password', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await attempt('a@example.com')).status, 401);
    const account = await attempt('a@example.com', PASSWORD);
    assert.equal(account.status, 429);
    assert.equal(account.json.error.code, 'rate_limited');
    assert.match(account.json.error.message, /this account/);
    assert.ok(Number(account.headers['retry-after']) >= 1);
    // The address has 3 attempts counted (the refused one stopped at the account's limit): two more
    // are allowed, then it is limited whatever the account.
    assert.equal((await attempt('b@example.com')).status, 401);
    assert.equal((await attempt('nobody@example.com')).status, 401);
    const address = await attempt('b@example.com', PASSWORD);
    assert.equal(address.status, 429);
    assert.match(address.json.error.message, /your address/);
  });
});

describe('mediad users (CLI)', () => {
  let t: TestServer;
  const run = promisify(execFile);
  const CLI = MEDIAD;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.stop());

  const env = () => {
    const db = t.server.runtime.deps.config.database;
    return {
      ...process.env,
      MEDIAD_DATA_DIR: t.dataDir,
      MEDIAD_PASSWORD_SCRYPT_LOG_N: '14',
      ...(db.dialect === 'postgres' ? { MEDIAD_DATABASE_URL: db.url } : {}),
    };
  };
  const cli = (...args: string[]) => run(process.execPath, [...CLI, 'users', ...args], { env: env() });

  it('create (password generated and shown once), list, reset-password, disable', async () => {
    const created = await cli('create', '--email', 'op@example.com', '--name', 'Op', '--org', 'Ops', '--role', 'admin');
    const password = /password: (\S+)/.exec(created.stdout)?.[1];
    assert.ok(password, created.stdout);
    await signIn(t, 'op@example.com', password);
    const orgs = await t.call('GET', '/orgs', {
      headers: { cookie: (await signIn(t, 'op@example.com', password)).cookie },
    });
    assert.deepEqual(
      orgs.json.data.map((o: any) => [o.name, o.role]),
      [['Ops', 'admin']],
    );

    const list = await cli('list');
    assert.match(list.stdout, /op@example\.com\s+"Op"\s+Ops:admin/);
    await assert.rejects(cli('create', '--email', 'op@example.com', '--name', 'Again', '--org', 'Ops'), (err: any) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr, /exists/);
      assert.ok(!err.stderr.includes('    at '), 'a message, not a stack trace');
      return true;
    });
    await assert.rejects(
      cli('create', '--email', 'x@example.com', '--name', 'X', '--org', 'Ops', '--role', 'boss'),
      /--role must be one of/,
    );

    const reset = await cli('reset-password', 'op@example.com');
    const next = /^\s+(\S+)$/m.exec(reset.stdout)?.[1];
    assert.ok(next && next !== password);
    const old = await t.call('POST', '/auth/sign-in', { body: { email: 'op@example.com', password } });
    assert.equal(old.status, 401);
    const s = await signIn(t, 'op@example.com', next);

    await cli('disable', 'op@example.com');
    assert.equal(
      (await t.call('GET', '/auth/session', { headers: { cookie: s.cookie } })).status,
      401,
      'their sessions end',
    );
    const disabled = await t.call('POST', '/auth/sign-in', { body: { email: 'op@example.com', password: next } });
    assert.equal(disabled.status, 401);
    await assert.rejects(cli('disable', 'ghost@example.com'), /no user with the email/);
  });
});
