import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type * as OpenId from 'openid-client';
import { Type, type Static } from 'typebox';
import { Check } from 'typebox/value';
import type { OidcConfig } from '../../config.js';
import type { Deps, Outbound } from '../../deps.js';
import { iso } from '../../deps.js';
import type { UsersTable } from '../../db/schema.js';
import { transact } from '../../db/transact.js';
import { recordUserAudit } from '../audit.js';
import { isAppError, OIDC_SIGN_IN_ERRORS, type OidcSignInError } from '../../errors.js';
import { addMember, ensureProject } from './orgs.js';
import type { SessionMeta, StartedSession } from './sessions.js';
import { insertUser, openSession } from './users.js';

// Sign-in with an OpenID Connect provider: the authorization code flow with PKCE, state and
// nonce (openid-client). The provider is discovered from its issuer at the first sign-in, and
// every call to it (discovery, keys, token, userinfo) goes through the guarded outbound client,
// so a provider on a private or loopback address needs MEDIAD_ALLOWED_URL_HOSTS like any fetch.
// What the callback must check (state, nonce, PKCE verifier) travels in a short-lived HttpOnly
// cookie signed with a key derived from the client secret: nothing is stored, any process can
// finish a sign-in another began, and the cookie ties the answer to the browser that asked.
// The verified email names the user; a new one is made only with MEDIAD_OIDC_AUTO_CREATE.

/** `__Host-`: Secure, Path=/, no Domain. Lax: the provider's redirect back is a top-level GET, which carries it. */
export const OIDC_STATE_COOKIE = '__Host-mediad_oidc';
export const OIDC_STATE_SECONDS = 600;
export const OIDC_CALLBACK_PATH = '/auth/oidc/callback';

const PROVIDER_TIMEOUT_SECONDS = 15;
/** Discovery documents, key sets and token answers are small; a provider sending more is refused. */
const MAX_PROVIDER_ANSWER_BYTES = 1024 * 1024;
const SCOPE = 'openid email profile';

let openIdClient: Promise<typeof OpenId> | null = null;
/** openid-client is loaded at the first sign-in: a server without OIDC (most) never loads it (bench/startup.ts). */
function loadClient(): Promise<typeof OpenId> {
  return (openIdClient ??= import('openid-client'));
}

/** A sign-in that failed for a reason the person is told (by its code); the detail is for the log. */
export class OidcFailure extends Error {
  constructor(
    readonly code: OidcSignInError,
    detail?: string,
    opts: { cause?: unknown } = {},
  ) {
    super(detail ?? OIDC_SIGN_IN_ERRORS[code], opts);
    this.name = 'OidcFailure';
  }
}

/** What the callback checks, carried in the state cookie. `expires`: unix milliseconds. */
const PendingSchema = Type.Object({
  state: Type.String(),
  nonce: Type.String(),
  verifier: Type.String(),
  expires: Type.Number(),
});
type Pending = Static<typeof PendingSchema>;

/** The provider's calls, through the guarded client (openid-client takes a fetch of this shape). */
export function guardedFetch(outbound: Outbound): OpenId.CustomFetch {
  return async (url, options) => {
    const body = options.body;
    let sent: string | Buffer | undefined;
    if (body === null || body === undefined) sent = undefined;
    else if (typeof body === 'string') sent = body;
    else if (body instanceof URLSearchParams) sent = body.toString();
    else if (body instanceof Uint8Array) sent = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    else if (body instanceof ArrayBuffer) sent = Buffer.from(body);
    else throw new TypeError('a streamed request body is not sent to the OpenID Connect provider');
    const res = await outbound.request(url, {
      method: options.method,
      headers: options.headers,
      body: sent,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      size += buf.length;
      if (size > MAX_PROVIDER_ANSWER_BYTES) {
        res.body.destroy();
        throw new Error(`the provider's answer to ${new URL(url).pathname} is over ${MAX_PROVIDER_ANSWER_BYTES} bytes`);
      }
      chunks.push(buf);
    }
    const nullBody = [101, 204, 205, 304].includes(res.status);
    return new Response(nullBody ? null : Buffer.concat(chunks), { status: res.status, headers: res.headers });
  };
}

/** The state cookie's value: the pending checks as base64url JSON, then its HMAC-SHA256. */
function sealState(key: Buffer, p: Pending): string {
  const payload = Buffer.from(JSON.stringify(p)).toString('base64url');
  return `${payload}.${createHmac('sha256', key).update(payload).digest('base64url')}`;
}

/** The pending checks of a state cookie, or null when it is malformed, altered or expired. */
function openState(key: Buffer, value: string, now: number): Pending | null {
  const dot = value.indexOf('.');
  if (dot <= 0 || value.length > 2000) return null;
  const payload = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1), 'base64url');
  const expected = createHmac('sha256', key).update(payload).digest();
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let p: unknown;
  try {
    p = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  return Check(PendingSchema, p) && p.expires > now ? p : null;
}

/** A display name from the provider's claims, else the email's local part. */
function nameFrom(claims: Record<string, unknown>, email: string): string {
  const str = (k: string) => {
    const v = claims[k];
    return typeof v === 'string' ? v.trim() : '';
  };
  const full = str('name') || [str('given_name'), str('family_name')].filter(Boolean).join(' ');
  return (full || str('preferred_username') || email.split('@')[0] || email).slice(0, 200);
}

export interface OidcSignIn {
  /** Where to send the browser, and the state cookie's value to set with it. */
  begin(): Promise<{ url: string; stateCookie: string }>;
  /** Checks the provider's answer against the state cookie and signs the person in. */
  finish(
    query: URLSearchParams,
    stateCookie: string | undefined,
    meta: SessionMeta,
    previousSessionId?: string,
  ): Promise<{ user: UsersTable } & StartedSession>;
}

export function createOidcSignIn(deps: Deps, oidc: OidcConfig): OidcSignIn {
  const redirectUri = `${deps.config.publicUrl}${OIDC_CALLBACK_PATH}`;
  const key = Buffer.from(hkdfSync('sha256', oidc.clientSecret, 'mediad', 'oidc state cookie', 32));
  const issuer = new URL(oidc.issuer);
  let discovered: Promise<OpenId.Configuration> | null = null;

  /** The provider's metadata, discovered once; a failed discovery is tried again at the next sign-in. */
  function configuration(): Promise<OpenId.Configuration> {
    discovered ??= loadClient()
      .then((client) =>
        client.discovery(issuer, oidc.clientId, oidc.clientSecret, client.ClientSecretBasic(oidc.clientSecret), {
          [client.customFetch]: guardedFetch(deps.outbound),
          timeout: PROVIDER_TIMEOUT_SECONDS,
          // Plain HTTP is allowed by config.ts only for an issuer on a loopback address.
          ...(issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : {}),
        }),
      )
      .catch((err: unknown) => {
        discovered = null;
        throw new OidcFailure('oidc_provider_unreachable', `discovery of ${oidc.issuer} failed`, { cause: err });
      });
    return discovered;
  }

  /** A failure of a call to the provider: it could not be reached, or it answered what does not verify. */
  function providerFailure(err: unknown, what: string): OidcFailure {
    if (err instanceof OidcFailure) return err;
    const unreachable =
      isAppError(err) || (err instanceof TypeError && /fetch|network/i.test(err.message)) || isAbort(err);
    return new OidcFailure(unreachable ? 'oidc_provider_unreachable' : 'oidc_invalid_response', `${what} failed`, {
      cause: err,
    });
  }

  async function userFor(email: string, claims: Record<string, unknown>): Promise<UsersTable> {
    const existing = await deps.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
    if (existing) return existing;
    if (!oidc.autoCreate)
      throw new OidcFailure('oidc_unknown_user', `no user has the email ${email} (MEDIAD_OIDC_AUTO_CREATE is off)`);
    try {
      return await transact(deps.db, async (trx) => {
        const now = iso(deps.clock.now());
        // A password nobody knows: the account signs in through the provider until an operator sets one.
        const user = await insertUser(
          trx,
          deps,
          { email, name: nameFrom(claims, email), password: randomBytes(24).toString('base64url') },
          now,
        );
        const orgRef = oidc.defaultOrg;
        if (orgRef) {
          const found = await trx
            .selectFrom('orgs')
            .select(['id'])
            .where((eb) => eb.or([eb('id', '=', orgRef), eb('name', '=', orgRef)]))
            .executeTakeFirst();
          // A name that is not there yet is made (as `mediad users create --org` does); an id cannot be.
          const org =
            found ?? (orgRef.startsWith('org_') ? undefined : (await ensureProject(trx, orgRef, 'default', now)).org);
          if (org) await addMember(trx, user.id, org.id, oidc.defaultRole, now);
          else deps.log.warn({ org: orgRef }, 'MEDIAD_OIDC_DEFAULT_ORG names no organisation');
        }
        await recordUserAudit(
          trx,
          user.id,
          {
            actor: { type: 'anonymous', id: null, ip: null },
            action: 'user.created',
            target: { type: 'user', id: user.id },
            details: { email, method: 'oidc', role: orgRef ? oidc.defaultRole : undefined },
          },
          now,
        );
        return user;
      });
    } catch (err) {
      // Two first sign-ins of the same person at once: the other made the user.
      const made = await deps.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
      if (made) return made;
      throw err;
    }
  }

  return {
    async begin() {
      const config = await configuration();
      const client = await loadClient();
      const verifier = client.randomPKCECodeVerifier();
      const pending: Pending = {
        state: client.randomState(),
        nonce: client.randomNonce(),
        verifier,
        expires: deps.clock.now().getTime() + OIDC_STATE_SECONDS * 1000,
      };
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: SCOPE,
        response_type: 'code',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: pending.state,
        nonce: pending.nonce,
      });
      return { url: url.href, stateCookie: sealState(key, pending) };
    },

    async finish(query, stateCookie, meta, previousSessionId) {
      const pending = stateCookie ? openState(key, stateCookie, deps.clock.now().getTime()) : null;
      if (!pending) throw new OidcFailure('oidc_state_missing', 'no valid, unexpired state cookie');
      if (query.get('state') !== pending.state)
        throw new OidcFailure('oidc_state_mismatch', 'the state of the answer is not the state cookie’s');
      if (query.has('error'))
        throw new OidcFailure(
          'oidc_denied',
          `the provider answered ${query.get('error')}: ${query.get('error_description') ?? ''}`,
        );
      const config = await configuration();
      const client = await loadClient();
      const current = new URL(redirectUri);
      for (const [k, v] of query) current.searchParams.append(k, v);

      let tokens: Awaited<ReturnType<typeof OpenId.authorizationCodeGrant>>;
      try {
        tokens = await client.authorizationCodeGrant(config, current, {
          pkceCodeVerifier: pending.verifier,
          expectedState: pending.state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        });
      } catch (err) {
        throw providerFailure(err, 'the code exchange');
      }
      const idClaims = tokens.claims();
      if (!idClaims) throw new OidcFailure('oidc_invalid_response', 'no ID token');
      let claims: Record<string, unknown> = { ...idClaims };
      // Many providers put the email only in the userinfo answer (oidc-provider does for the code flow).
      if (typeof claims.email !== 'string' || claims.email_verified === undefined) {
        if (config.serverMetadata().userinfo_endpoint) {
          try {
            claims = { ...claims, ...(await client.fetchUserInfo(config, tokens.access_token, idClaims.sub)) };
          } catch (err) {
            throw providerFailure(err, 'the userinfo call');
          }
        }
      }
      const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
      if (!email || email.length > 254 || !email.includes('@'))
        throw new OidcFailure('oidc_email_missing', 'no email claim (is the email scope allowed for this client?)');
      // Only an email the provider vouches for names a user: an unverified one could be anyone's.
      if (claims.email_verified !== true && claims.email_verified !== 'true')
        throw new OidcFailure(
          'oidc_email_unverified',
          `email_verified is ${String(claims.email_verified)} for ${email}`,
        );
      const user = await userFor(email, claims);
      if (user.status !== 'active') throw new OidcFailure('oidc_account_disabled', `${email} is disabled`);
      return openSession(deps, user, meta, previousSessionId);
    },
  };
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}
