import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, asApiError, ok } from '../../lib/api/client';
import type { Membership } from '../../lib/api/types';
import { Button } from '../../components/button';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { Skeleton } from '../../components/skeleton';
import { useSession } from '../../lib/session';
import { AuthCard } from './auth-card';
import { useFragmentToken } from './fragment-token';

// Accepting an invitation: /app/invite#token=… (the token is in the fragment, which no server
// sees). Signed out: a new account (name and password) is made and signed in. Signed in: the
// membership is added to this account when its email is the invitation's (the API checks).

const REASONS: Record<string, string> = {
  not_found: 'This invitation link is not valid. Ask for a new one.',
  invitation_used: 'This invitation was accepted already. Sign in instead.',
  invitation_expired: 'This invitation has expired. Ask for a new one.',
  invitation_revoked: 'This invitation was revoked. Ask for a new one.',
};

export default function InvitePage() {
  const { state, adopt, signOut } = useSession();
  const navigate = useNavigate();
  const token = useFragmentToken();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const accept = async (body: { token: string; name?: string; password?: string }, before: Membership[]) => {
    setBusy(true);
    setError(null);
    try {
      const session = ok(await api.POST('/auth/accept-invitation', { body })).data;
      adopt(session);
      // Open the organisation just joined (the membership that was not there before).
      const joined =
        session.memberships.find((m) => !before.some((b) => b.org.id === m.org.id)) ?? session.memberships[0];
      const project = joined?.projects[0];
      navigate(project ? `/p/${project.id}/overview` : '/account', { replace: true });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const e = error ? asApiError(error) : null;
  const reason = e ? REASONS[e.code] : undefined;
  const fieldError = (f: string) => e?.details.find((d) => d.field === f || d.field === `body.${f}`)?.message;

  let content;
  if (!token) {
    content = (
      <div className="banner banner-error" role="alert">
        This page needs the whole invitation link (it ends with <code>#token=…</code>). Open the link you were sent
        again.
      </div>
    );
  } else if (state.status === 'loading') {
    content = <Skeleton lines={3} />;
  } else if (state.status === 'signed-in') {
    const me = state.session.user;
    content = (
      <div className="stack">
        <p>
          You are signed in as <strong>{me.email}</strong>. Accept the invitation to join its organisation with this
          account (the invitation must be for this email).
        </p>
        {reason ? (
          <div className="banner banner-error" role="alert">
            {reason}
          </div>
        ) : (
          <ErrorBanner error={error} />
        )}
        <Button
          tone="primary"
          className="btn-block"
          busy={busy}
          onClick={() => void accept({ token }, state.session.memberships)}
        >
          Accept the invitation
        </Button>
        <Button
          className="btn-block"
          onClick={async () => {
            await signOut();
            setError(null);
          }}
        >
          Sign out, to use another account
        </Button>
      </div>
    );
  } else {
    content = (
      <form
        onSubmit={(ev) => {
          ev.preventDefault();
          void accept({ token, name, password }, []);
        }}
      >
        <p className="muted">Create your account to join. You can also sign in first if you have one.</p>
        <Field label="Your name" error={fieldError('name')}>
          {(p) => (
            <input {...p} autoComplete="name" value={name} onChange={(ev) => setName(ev.target.value)} required />
          )}
        </Field>
        <Field label="Password" hint="At least 10 characters." error={fieldError('password')}>
          {(p) => (
            <input
              {...p}
              type="password"
              autoComplete="new-password"
              value={password}
              onChange={(ev) => setPassword(ev.target.value)}
              required
            />
          )}
        </Field>
        {reason ? (
          <div className="banner banner-error" role="alert">
            {reason}
          </div>
        ) : e?.code === 'conflict' ? (
          <div className="banner banner-error" role="alert">
            {e.message}.{' '}
            <Link to="/sign-in" state={{ from: `/invite#token=${token}` }}>
              Sign in
            </Link>
          </div>
        ) : (
          <ErrorBanner error={error} />
        )}
        <Button type="submit" tone="primary" busy={busy} className="btn-block">
          Create account and join
        </Button>
        <p className="small">
          <Link to="/sign-in" state={{ from: `/invite#token=${token}` }}>
            I have an account: sign in first
          </Link>
        </p>
      </form>
    );
  }

  return <AuthCard title="Join an organisation on mediad">{content}</AuthCard>;
}
