import { useState } from 'react';
import { Navigate, useLocation, useNavigate, useSearchParams } from 'react-router';
import { api, asApiError, ok } from '../../lib/api/client';
import { Button } from '../../components/button';
import { Field } from '../../components/field';
import { useLoad } from '../../lib/use-load';
import { oidcErrorMessage } from './oidc-errors';
import { firstProject, useSession } from '../../lib/session';
import { AuthCard } from './auth-card';

// Sign-in: one generic message for a wrong email or password (as the API answers), and the
// rate limit's wait when there were too many attempts. With OpenID Connect on (GET /auth/status
// names the provider) a "Sign in with <name>" link starts it; the password form is hidden when
// password sign-in is off; ?error=<code> (the callback's failures) shows its readable message.

function fromOf(state: unknown): string | null {
  if (typeof state === 'object' && state !== null && 'from' in state && typeof state.from === 'string')
    return state.from;
  return null;
}

export function SignInPage() {
  const { state, adopt } = useSession();
  const navigate = useNavigate();
  const location = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const [params] = useSearchParams();
  const oidcError = oidcErrorMessage(params.get('error'));
  const status = useLoad(async () => ok(await api.GET('/auth/status')).data, 'status');
  const oidc = status.data?.oidc;
  const passwordOn = status.data?.password_sign_in ?? true;

  if (state.status === 'setup') return <Navigate to="/setup" replace />;
  if (state.status === 'signed-in' && !busy) {
    const p = firstProject(state.session);
    return <Navigate to={fromOf(location.state) ?? (p ? `/p/${p}/overview` : '/account')} replace />;
  }

  return (
    <AuthCard title="Sign in to mediad">
      {oidcError ? (
        <div className="banner banner-error" role="alert" data-oidc-error>
          {oidcError}
        </div>
      ) : null}
      {oidc ? (
        <a className="btn btn-block btn-primary oidc-button" href={oidc.start_url}>
          Sign in with {oidc.name}
        </a>
      ) : null}
      {oidc && passwordOn ? <p className="muted small or-line">or with your email and password</p> : null}
      {passwordOn ? (
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            setBusy(true);
            setMessage(null);
            try {
              const session = ok(await api.POST('/auth/sign-in', { body: { email, password } })).data;
              adopt(session);
              const p = firstProject(session);
              navigate(fromOf(location.state) ?? (p ? `/p/${p}/overview` : '/account'), { replace: true });
            } catch (err) {
              const e = asApiError(err);
              setMessage(
                e.code === 'rate_limited'
                  ? `Too many sign-in attempts. Try again in ${e.retryAfter ?? 60} seconds.`
                  : e.code === 'invalid_credentials'
                    ? 'The email or password is not right.'
                    : `${e.message} ${e.hint}`,
              );
            } finally {
              setBusy(false);
            }
          }}
        >
          <Field label="Email">
            {(p) => (
              <input
                {...p}
                type="email"
                autoComplete="username"
                value={email}
                onChange={(e) => setEmail(e.target.value)}
                required
              />
            )}
          </Field>
          <Field label="Password">
            {(p) => (
              <input
                {...p}
                type="password"
                autoComplete="current-password"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                required
              />
            )}
          </Field>
          {message ? (
            <div className="banner banner-error" role="alert">
              {message}
            </div>
          ) : null}
          <Button type="submit" tone={oidc ? 'default' : 'primary'} busy={busy} className="btn-block">
            Sign in
          </Button>
        </form>
      ) : status.data && !oidc ? (
        <p className="muted">Password sign-in is turned off on this server.</p>
      ) : null}
      {passwordOn ? (
        <p className="muted small">
          Forgot your password? An operator can set a new one with <code>mediad users reset-password</code>.
        </p>
      ) : null}
    </AuthCard>
  );
}
