import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import Provider from 'oidc-provider';
import { createUserInOrg, disableUser } from '../../src/services/people/users.js';
import { freePort, startTestServer, type ApiResponse, type TestServer } from '../helpers/server.js';

// Sign-in with OpenID Connect against a real provider: the npm oidc-provider package, started here
// on 127.0.0.1 over plain HTTP (mediad allows http:// only for a loopback issuer, and like every
// outbound call it must be allowed with MEDIAD_ALLOWED_URL_HOSTS). The test is the browser: it
// follows the redirects, keeps both sides' cookies and posts the provider's login and consent forms.

const CLIENT_ID = 'mediad-test';
const CLIENT_SECRET = 'a-client-secret-of-the-test-provider-0123456789';
const PASSWORD = 'correct horse battery';

/** The provider's people: the login typed into its form is the account id. */
const ACCOUNTS: Record<string, { email: string; email_verified: boolean; name: string }> = {
  ada: { email: 'Ada@Example.com', email_verified: true, name: 'Ada Lovelace' },
  grace: { email: 'grace@example.com', email_verified: true, name: 'Grace Hopper' },
  mallory: { email: 'ada@example.com', email_verified: false, name: 'Not Ada' },
  nobody: { email: 'nobody@example.com', email_verified: true, name: 'No Body' },
  eve: { email: 'eve@example.com', email_verified: true, name: 'Eve' },
};

function setCookies(res: ApiResponse): string[] {
  // The test client joins repeated headers with ", "; cookie values here never contain one.
  return (res.headers['set-cookie'] ?? '').split(/, (?=__Host-)/).filter(Boolean);
}

function cookieNamed(res: ApiResponse, name: string): string | undefined {
  return setCookies(res).find((c) => c.startsWith(`${name}=`));
}

/** A browser's cookie jar for the provider (paths ignored: the provider's cookie names are distinct enough). */
class Jar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/** The first form of a provider page: where it posts and its inputs, with login and password filled in. */
function fillForm(html: string, base: string, login: string): { action: string; body: URLSearchParams } {
  const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  assert.ok(form, `a form on the provider's page:\n${html.slice(0, 500)}`);
  const body = new URLSearchParams();
  for (const input of form[2]!.matchAll(/<input[^>]*>/gi)) {
    const name = /name="([^"]+)"/.exec(input[0])?.[1];
    if (!name) continue;
    const value = /value="([^"]*)"/.exec(input[0])?.[1] ?? '';
    body.set(name, name === 'login' ? login : name === 'password' ? 'any password' : value);
  }
  return { action: new URL(form[1]!, base).href, body };
}

interface Started {
  /** name=value of mediad's state cookie, as the browser sends it back. */
  stateCookie: string;
  /** The URL of mediad's callback the provider redirected to. */
  callback: string;
  authorizeUrl: URL;
  /** The provider's forms posted on the way (their `prompt`: login, consent). */
  prompts: string[];
}

/** start → the provider's login and consent → the redirect back to mediad (not followed). */
async function throughProvider(t: TestServer, login: string): Promise<Started> {
  const start = await t.call('GET', '/auth/oidc/start');
  assert.equal(start.status, 302, start.text);
  const state = cookieNamed(start, '__Host-mediad_oidc');
  assert.ok(state, 'the start sets the state cookie');
  const authorizeUrl = new URL(start.headers.location!);
  const jar = new Jar();
  let url = authorizeUrl.href;
  let init: RequestInit = {};
  const prompts: string[] = [];
  for (let hop = 0; hop < 20; hop++) {
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...init.headers, cookie: jar.header() } });
    jar.take(res);
    if (res.status >= 300 && res.status < 400) {
      const next = new URL(res.headers.get('location')!, url).href;
      if (next.startsWith(t.base)) return { stateCookie: state.split(';')[0]!, callback: next, authorizeUrl, prompts };
      url = next;
      init = {};
      continue;
    }
    const html = await res.text();
    assert.equal(res.status, 200, `the provider answered ${res.status} at ${url}:\n${html.slice(0, 800)}`);
    const form = fillForm(html, url, login);
    prompts.push(form.body.get('prompt') ?? '?');
    url = form.action;
    init = {
      method: 'POST',
      body: form.body.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    };
  }
  throw new Error('the provider never redirected back to mediad');
}

/** The whole round trip; answers mediad's callback answer. */
async function signInVia(t: TestServer, login: string, headers: Record<string, string> = {}): Promise<ApiResponse> {
  const s = await throughProvider(t, login);
  const cookie = [s.stateCookie, headers.cookie].filter(Boolean).join('; ');
  return t.call('GET', s.callback, { headers: { ...headers, cookie } });
}

function errorOf(res: ApiResponse, t: TestServer): string | null {
  assert.equal(res.status, 302, res.text);
  const to = new URL(res.headers.location!);
  assert.equal(to.origin, t.base);
  if (to.pathname === '/app/') return null;
  assert.equal(to.pathname, '/app/sign-in');
  return to.searchParams.get('error');
}

const sessionCookieOf = (res: ApiResponse) => cookieNamed(res, '__Host-mediad_session')?.split(';')[0];

describe('OpenID Connect sign-in against a loopback provider', () => {
  let providerPort: number;
  let issuer: string;
  let httpServer: Server;
  /** Existing users only; password sign-in on. */
  let t: TestServer;
  /** New users made with a default membership; password sign-in off. */
  let auto: TestServer;
  /** The provider is not in MEDIAD_ALLOWED_URL_HOSTS. */
  let guarded: TestServer;
  const providerRequests: string[] = [];

  before(async () => {
    providerPort = await freePort();
    issuer = `http://127.0.0.1:${providerPort}`;
    const oidc = {
      MEDIAD_OIDC_ISSUER: issuer,
      MEDIAD_OIDC_CLIENT_ID: CLIENT_ID,
      MEDIAD_OIDC_CLIENT_SECRET: CLIENT_SECRET,
      MEDIAD_OIDC_NAME: 'Test IdP',
    };
    const allowed = { MEDIAD_ALLOWED_URL_HOSTS: `127.0.0.1:${providerPort}` };
    t = await startTestServer({ ...oidc, ...allowed });
    auto = await startTestServer({
      ...oidc,
      ...allowed,
      MEDIAD_OIDC_AUTO_CREATE: 'true',
      MEDIAD_OIDC_DEFAULT_ORG: 'Acme',
      MEDIAD_OIDC_DEFAULT_ROLE: 'member',
      MEDIAD_PASSWORD_SIGN_IN: 'false',
    });
    guarded = await startTestServer(oidc);

    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
          redirect_uris: [t, auto, guarded].map((s) => `${s.base}/auth/oidc/callback`),
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
      async findAccount(_ctx, id) {
        const account = ACCOUNTS[id];
        if (!account) return undefined;
        return { accountId: id, claims: async () => ({ sub: id, ...account }) };
      },
      // mediad must send a PKCE challenge: the provider refuses an authorization request without one.
      pkce: { methods: ['S256'], required: () => true },
      cookies: { keys: ['a cookie key of the test provider'] },
      ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
      features: { devInteractions: { enabled: true } },
    });
    provider.use(async (ctx, next) => {
      providerRequests.push(`${ctx.method} ${ctx.path}`);
      await next();
    });
    httpServer = await new Promise<Server>((resolve) => {
      const s = provider.listen(providerPort, '127.0.0.1', () => resolve(s));
    });

    await createUserInOrg(t.server.runtime.deps, {
      email: 'ada@example.com',
      name: 'Ada',
      password: PASSWORD,
      org: 'Acme',
      role: 'admin',
    });
    await createUserInOrg(t.server.runtime.deps, {
      email: 'eve@example.com',
      name: 'Eve',
      password: PASSWORD,
      org: 'Acme',
      role: 'viewer',
    });
    await disableUser(t.server.runtime.deps, 'eve@example.com');
  });

  after(async () => {
    await Promise.all([t?.stop(), auto?.stop(), guarded?.stop()]);
    await new Promise((resolve) => httpServer?.close(resolve));
  });

  it('GET /auth/status names the sign-in methods', async () => {
    const status = await t.call('GET', '/auth/status');
    assert.equal(status.json.data.password_sign_in, true);
    assert.deepEqual(status.json.data.oidc, { name: 'Test IdP', start_url: `${t.base}/auth/oidc/start` });
    const off = await auto.call('GET', '/auth/status');
    assert.equal(off.json.data.password_sign_in, false);
    assert.equal(off.json.data.oidc.name, 'Test IdP');
  });

  it('round trip: start → provider login and consent → callback → a session of the existing user', async () => {
    const before = await t.call('POST', '/auth/sign-in', { body: { email: 'ada@example.com', password: PASSWORD } });
    assert.equal(before.status, 200);
    const oldSession = sessionCookieOf(before)!;

    const s = await throughProvider(t, 'ada');
    assert.deepEqual(s.prompts, ['login', 'consent'], 'the provider’s login and consent forms were posted');
    // The authorization request: code flow with PKCE (S256), state and nonce, our callback.
    const q = s.authorizeUrl.searchParams;
    assert.equal(s.authorizeUrl.origin, issuer);
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('client_id'), CLIENT_ID);
    assert.equal(q.get('redirect_uri'), `${t.base}/auth/oidc/callback`);
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.match(q.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.ok((q.get('state') ?? '').length >= 20 && (q.get('nonce') ?? '').length >= 20);
    assert.match(q.get('scope') ?? '', /\bopenid\b.*\bemail\b/);
    assert.ok(!s.stateCookie.includes(q.get('code_challenge')!), 'the verifier, not the challenge, is kept');

    const callback = await t.call('GET', s.callback, { headers: { cookie: `${s.stateCookie}; ${oldSession}` } });
    assert.equal(errorOf(callback, t), null, callback.headers.location);
    assert.equal(callback.headers.location, `${t.base}/app/`);
    const session = cookieNamed(callback, '__Host-mediad_session')!;
    for (const attr of ['Path=/', 'Secure', 'HttpOnly', 'SameSite=Lax'])
      assert.ok(session.includes(attr), `${attr} in ${session}`);
    assert.match(cookieNamed(callback, '__Host-mediad_oidc') ?? '', /^__Host-mediad_oidc=; .*Max-Age=0/, 'cleared');

    const me = await t.call('GET', '/auth/session', { headers: { cookie: session.split(';')[0]! } });
    assert.equal(me.status, 200);
    assert.equal(me.json.data.user.email, 'ada@example.com');
    assert.equal(me.json.data.user.name, 'Ada', 'an existing user keeps their name');
    assert.equal(me.json.data.memberships[0].role, 'admin');
    assert.ok(me.json.data.user.last_sign_in);
    const old = await t.call('GET', '/auth/session', { headers: { cookie: oldSession } });
    assert.equal(old.status, 401, 'the session the browser held before ended (rotation)');

    // The same answer again (a replayed code) signs nobody in.
    const replay = await t.call('GET', s.callback, { headers: { cookie: s.stateCookie } });
    assert.equal(errorOf(replay, t), 'oidc_invalid_response');
    assert.equal(sessionCookieOf(replay), undefined);
  });

  it('an email without a user is refused when auto-create is off', async () => {
    const res = await signInVia(t, 'nobody');
    assert.equal(errorOf(res, t), 'oidc_unknown_user');
    assert.equal(sessionCookieOf(res), undefined);
    const made = await t.server.runtime.deps.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', 'nobody@example.com')
      .executeTakeFirst();
    assert.equal(made, undefined);
    const refused = await t.server.runtime.deps.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'auth.sign_in_failed')
      .execute();
    assert.ok(
      refused.some((r) => JSON.parse(r.details).reason === 'oidc_unknown_user'),
      'the refused sign-in is in the audit log',
    );
  });

  it('email_verified: false is refused, even for an existing user’s email', async () => {
    const res = await signInVia(t, 'mallory');
    assert.equal(errorOf(res, t), 'oidc_email_unverified');
    assert.equal(sessionCookieOf(res), undefined);
  });

  it('a disabled user cannot sign in through the provider', async () => {
    const res = await signInVia(t, 'eve');
    assert.equal(errorOf(res, t), 'oidc_account_disabled');
    assert.equal(sessionCookieOf(res), undefined);
  });

  it('an answer whose state is not the state cookie’s is refused, and so is one without the cookie', async () => {
    const s = await throughProvider(t, 'ada');
    const tampered = new URL(s.callback);
    tampered.searchParams.set('state', 'x'.repeat(43));
    const mismatch = await t.call('GET', tampered.href, { headers: { cookie: s.stateCookie } });
    assert.equal(errorOf(mismatch, t), 'oidc_state_mismatch');
    assert.equal(sessionCookieOf(mismatch), undefined);

    // Another browser's sign-in: its state cookie with this answer.
    const other = await throughProvider(t, 'ada');
    const crossed = await t.call('GET', s.callback, { headers: { cookie: other.stateCookie } });
    assert.equal(errorOf(crossed, t), 'oidc_state_mismatch');

    const noCookie = await t.call('GET', s.callback);
    assert.equal(errorOf(noCookie, t), 'oidc_state_missing');
    const [payload] = s.stateCookie.split('.');
    const forged = await t.call('GET', s.callback, { headers: { cookie: `${payload}.${'A'.repeat(43)}` } });
    assert.equal(errorOf(forged, t), 'oidc_state_missing', 'an altered cookie is not believed');

    // The untouched answer still works once: the checks above did not spend it.
    const ok = await t.call('GET', s.callback, { headers: { cookie: s.stateCookie } });
    assert.equal(errorOf(ok, t), null);
  });

  it('the provider refusing the sign-in (access_denied) is reported, not a stack trace', async () => {
    const s = await throughProvider(t, 'ada');
    const state = new URL(s.callback).searchParams.get('state')!;
    const denied = await t.call(
      'GET',
      `${t.base}/auth/oidc/callback?error=access_denied&error_description=${encodeURIComponent('no <b>way</b>')}&state=${state}`,
      { headers: { cookie: s.stateCookie } },
    );
    assert.equal(errorOf(denied, t), 'oidc_denied');
    assert.ok(!denied.headers.location!.includes('way'), 'the provider’s text is not echoed');
  });

  it('auto-create: a new user with the default membership and role; password sign-in is off', async () => {
    const acme = await auto.key('Acme', 'web');
    const res = await signInVia(auto, 'grace');
    assert.equal(errorOf(res, auto), null, res.headers.location);
    const me = await auto.call('GET', '/auth/session', { headers: { cookie: sessionCookieOf(res)! } });
    assert.equal(me.status, 200);
    assert.equal(me.json.data.user.email, 'grace@example.com');
    assert.equal(me.json.data.user.name, 'Grace Hopper', 'the name comes from the provider');
    assert.deepEqual(me.json.data.memberships, [
      { org: { id: acme.org_id, name: 'Acme' }, role: 'member', projects: [{ id: acme.project_id, name: 'web' }] },
    ]);
    // The new member acts on the organisation's project with the role given.
    const media = await auto.call('GET', '/media', {
      headers: { cookie: sessionCookieOf(res)!, 'x-mediad-project': acme.project_id },
    });
    assert.equal(media.status, 200);

    // A second sign-in finds the same user (no second one, no second membership).
    const again = await signInVia(auto, 'grace');
    assert.equal(errorOf(again, auto), null);
    const rows = await auto.server.runtime.deps.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', 'grace@example.com')
      .execute();
    assert.equal(rows.length, 1);
    // The audit log of the organisation has the user's creation (once) and both sign-ins.
    const audit = await auto.server.runtime.deps.db
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('org_id', '=', acme.org_id)
      .where('target_id', 'in', [rows[0]!.id])
      .execute();
    assert.deepEqual(
      audit.map((r) => r.action),
      ['user.created'],
      'one creation record targets the user',
    );
    assert.deepEqual(JSON.parse(audit[0]!.details), { email: 'grace@example.com', method: 'oidc', role: 'member' });
    const signIns = await auto.server.runtime.deps.db
      .selectFrom('audit_log')
      .select('action')
      .where('org_id', '=', acme.org_id)
      .where('action', '=', 'auth.sign_in')
      .execute();
    assert.equal(signIns.length, 2, 'both sign-ins are recorded');

    const password = await auto.call('POST', '/auth/sign-in', {
      body: { email: 'grace@example.com', password: 'whatever password' },
    });
    assert.equal(password.status, 403);
    assert.equal(password.json.error.code, 'password_sign_in_disabled');
    assert.match(password.json.error.message, /Test IdP/);

    const unverified = await signInVia(auto, 'mallory');
    assert.equal(errorOf(unverified, auto), 'oidc_email_unverified', 'auto-create takes verified emails only');
  });

  it('calls to the provider go through the guarded client: a loopback issuer not allowed is refused', async () => {
    const seen = providerRequests.length;
    const res = await guarded.call('GET', '/auth/oidc/start');
    assert.equal(errorOf(res, guarded), 'oidc_provider_unreachable');
    assert.equal(providerRequests.length, seen, 'no request reached the provider');
  });

  it('without a provider configured the routes say so', async () => {
    const plain = await startTestServer();
    try {
      const status = await plain.call('GET', '/auth/status');
      assert.equal(status.json.data.oidc, undefined);
      const start = await plain.call('GET', '/auth/oidc/start');
      assert.equal(errorOf(start, plain), 'oidc_not_configured');
    } finally {
      await plain.stop();
    }
  });
});
