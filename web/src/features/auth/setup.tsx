import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, asApiError, ok } from '../../lib/api/client';
import type { Data } from '../../lib/api/types';
import { Button } from '../../components/button';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { Secret } from '../../components/secret';
import { useSession } from '../../lib/session';
import { useBusy } from '../../lib/use-busy';
import { AuthCard } from './auth-card';
import { NewPasswordInput } from '../../components/new-password-input';
import { useFragmentToken } from './fragment-token';

// First run: the setup link the server logged (/app/setup#token=…; the fragment never reaches a
// server) makes the first owner, organisation, project and API key. The key is shown once.

type Made = Data<'/auth/setup', 'post', 201>;

export default function SetupPage() {
  const { state, refresh } = useSession();
  const navigate = useNavigate();
  const token = useFragmentToken();
  const [form, setForm] = useState({ email: '', name: '', password: '', org: '', project: '' });
  const { busy, error, submit } = useBusy();
  const [made, setMade] = useState<Made | null>(null);
  const set = (k: keyof typeof form) => (e: React.ChangeEvent<HTMLInputElement>) =>
    setForm((f) => ({ ...f, [k]: e.target.value }));
  const fieldError = (f: string) =>
    error ? asApiError(error).details.find((d) => d.field === f || d.field === `body.${f}`)?.message : undefined;

  if (made) {
    return (
      <AuthCard title="mediad is ready">
        <p>
          You are signed in as <strong>{made.user.email}</strong>, owner of <strong>{made.org.name}</strong>. This is
          the API key of project <strong>{made.project.name}</strong>:
        </p>
        <Secret value={made.key.key ?? ''} label="Your new API key" />
        <div className="banner banner-warn" role="note">
          Copy it now: it is shown only once (mediad keeps only its hash). You can make more keys any time.
        </div>
        <Button
          tone="primary"
          className="btn-block"
          onClick={async () => {
            await refresh();
            navigate(`/p/${made.project.id}/overview`, { replace: true });
          }}
        >
          Continue to {made.project.name}
        </Button>
      </AuthCard>
    );
  }

  if (state.status !== 'setup' && state.status !== 'loading') {
    return (
      <AuthCard title="mediad is already set up">
        <p>
          <Link to="/sign-in">Sign in</Link> instead.
        </p>
      </AuthCard>
    );
  }

  return (
    <AuthCard title="Set up mediad">
      <p className="muted">
        Create the first owner account, the organisation and its first project. You will get an API key for it.
      </p>
      {!token ? (
        <div className="banner banner-error" role="alert">
          This page needs the setup link that mediad printed in its log at start (it ends with #token=…).
        </div>
      ) : null}
      <form
        onSubmit={submit(async () => {
          const data = ok(await api.POST('/auth/setup', { body: { token, ...form } })).data;
          // The token is spent: drop it from the address bar and history.
          window.history.replaceState(null, '', window.location.pathname);
          setMade(data);
        })}
      >
        <Field label="Your name" error={fieldError('name')}>
          {(p) => <input {...p} autoComplete="name" value={form.name} onChange={set('name')} required />}
        </Field>
        <Field label="Email" error={fieldError('email')}>
          {(p) => (
            <input {...p} type="email" autoComplete="username" value={form.email} onChange={set('email')} required />
          )}
        </Field>
        <Field label="Password" hint="At least 10 characters." error={fieldError('password')}>
          {(p) => <NewPasswordInput {...p} value={form.password} onChange={set('password')} />}
        </Field>
        <Field label="Organisation" hint="Your team or company." error={fieldError('org')}>
          {(p) => <input {...p} value={form.org} onChange={set('org')} required />}
        </Field>
        <Field label="First project" hint="For example production or staging." error={fieldError('project')}>
          {(p) => <input {...p} value={form.project} onChange={set('project')} required />}
        </Field>
        <ErrorBanner error={error} />
        <Button type="submit" tone="primary" busy={busy} disabled={!token} className="btn-block">
          Create owner and project
        </Button>
      </form>
    </AuthCard>
  );
}
