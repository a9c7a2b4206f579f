import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import type { OidcSignInError } from '../errors.js';
import { sessionToken } from '../http/auth.js';
import { errorResponses } from '../http/schemas.js';
import {
  createOidcSignIn,
  OIDC_CALLBACK_PATH,
  OIDC_STATE_COOKIE,
  OIDC_STATE_SECONDS,
  OidcFailure,
  type OidcSignIn,
} from '../services/people/oidc.js';
import { findSession } from '../services/people/sessions.js';
import { sessionCookie } from './accounts.js';
import { recordSignInFailure } from '../services/people/users.js';

// Sign-in with an OpenID Connect provider (services/people/oidc.ts). Both routes are browser
// navigations, so they answer with redirects: to the provider, then to the web application
// (/app/ signed in, or /app/sign-in?error=<code> with a code from OIDC_SIGN_IN_ERRORS).

const Redirect = (description: string) => Type.Null({ description });

const CallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    state: Type.Optional(Type.String({ maxLength: 1024 })),
    error: Type.Optional(Type.String({ maxLength: 1024 })),
    error_description: Type.Optional(Type.String({ maxLength: 4096 })),
    iss: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  // Providers add their own parameters (session_state, scope…): they are passed on to openid-client.
  { additionalProperties: Type.String({ maxLength: 4096 }) },
);

function cookieValue(req: FastifyRequest, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const stateCookie = (value: string, maxAge: number) =>
  `${OIDC_STATE_COOKIE}=${value}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=${maxAge}`;

export const oidcRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const base = deps.config.publicUrl;
  const signIn: OidcSignIn | null = deps.config.oidc ? createOidcSignIn(deps, deps.config.oidc) : null;

  /** To the sign-in page with a code it explains; the detail goes to the log, never to the browser. */
  const fail = async (
    req: FastifyRequest,
    reply: FastifyReply,
    err: unknown,
    fallback: OidcSignInError = 'oidc_failed',
  ) => {
    const code = err instanceof OidcFailure ? err.code : fallback;
    if (err instanceof OidcFailure) req.log.warn({ err, code }, 'OpenID Connect sign-in refused');
    else req.log.error({ err }, 'OpenID Connect sign-in failed');
    await recordSignInFailure(deps, { userId: null, email: null, reason: code, method: 'oidc', ip: req.ip });
    return reply
      .header('set-cookie', stateCookie('', 0))
      .header('cache-control', 'no-store')
      .redirect(`${base}/app/sign-in?error=${code}`, 302);
  };

  app.get(
    '/auth/oidc/start',
    {
      schema: {
        response: {
          302: Redirect('To the provider’s sign-in page, or to /app/sign-in?error=<code> when it cannot be reached'),
          ...errorResponses,
        },
      },
    },
    async (req, reply) => {
      if (!signIn) return fail(req, reply, new OidcFailure('oidc_not_configured'));
      try {
        const { url, stateCookie: value } = await signIn.begin();
        return reply
          .header('set-cookie', stateCookie(value, OIDC_STATE_SECONDS))
          .header('cache-control', 'no-store')
          .redirect(url, 302);
      } catch (err) {
        return fail(req, reply, err, 'oidc_provider_unreachable');
      }
    },
  );

  app.get(
    OIDC_CALLBACK_PATH,
    {
      schema: {
        querystring: CallbackQuery,
        response: {
          302: Redirect('To /app/ signed in (the session cookie is set), or to /app/sign-in?error=<code>'),
          ...errorResponses,
        },
      },
    },
    async (req, reply) => {
      // The state cookie serves one answer only: every answer here clears it.
      if (!signIn) return fail(req, reply, new OidcFailure('oidc_not_configured'));
      try {
        const query = new URL(req.url, base).searchParams;
        // Signing in ends the session the browser held before, as password sign-in does.
        const previous = sessionToken(req);
        const before = previous ? await findSession(deps, previous) : null;
        const { token } = await signIn.finish(
          query,
          cookieValue(req, OIDC_STATE_COOKIE),
          { userAgent: req.headers['user-agent'], ip: req.ip },
          before?.session.id,
        );
        return reply
          .header('set-cookie', [stateCookie('', 0), sessionCookie(deps, token)])
          .header('cache-control', 'no-store')
          .redirect(`${base}/app/`, 302);
      } catch (err) {
        return fail(req, reply, err);
      }
    },
  );
};
