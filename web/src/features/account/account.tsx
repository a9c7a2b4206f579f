import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, ok } from '../../lib/api/client';
import type { AccountSession, Theme } from '../../lib/api/types';
import { useToast } from '../../components/toast';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { DataTable } from '../../components/data-table';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { useSession, useSignedIn } from '../../lib/session';
import { applyTheme } from '../../lib/theme';
import { useBusy } from '../../lib/use-busy';
import { NewPasswordInput } from '../../components/new-password-input';

// The signed-in person's account: name, theme, password, and their sessions (revoke one, or
// sign out everywhere).

const THEMES: { value: Theme; label: string }[] = [
  { value: 'light', label: 'Light' },
  { value: 'dark', label: 'Dark' },
  { value: 'system', label: 'Same as the system' },
];

export default function AccountPage() {
  return (
    <div className="page">
      <PageHeader title="Account" description="Your profile, password and where you are signed in." />
      <div className="grid-2">
        <ProfileCard />
        <PasswordCard />
      </div>
      <SessionsCard />
    </div>
  );
}

function ProfileCard() {
  const session = useSignedIn();
  const { refresh } = useSession();
  const toast = useToast();
  const [name, setName] = useState(session.user.name);
  const { busy, error, setError, submit } = useBusy();
  const [theme, setTheme] = useState<Theme>(session.user.theme);
  const saveTheme = async (next: Theme) => {
    setTheme(next);
    applyTheme(next);
    try {
      ok(await api.PATCH('/account', { body: { theme: next } }));
      await refresh();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section className="card stack" aria-labelledby="profile-h">
      <h2 id="profile-h">Profile</h2>
      <p className="muted">{session.user.email}</p>
      <form
        className="stack"
        onSubmit={submit(async () => {
          ok(await api.PATCH('/account', { body: { name } }));
          await refresh();
          toast({ title: 'Name saved', tone: 'success' });
        })}
      >
        <Field label="Name">
          {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />}
        </Field>
        <div>
          <Button type="submit" tone="primary" busy={busy}>
            Save name
          </Button>
        </div>
      </form>
      <fieldset>
        <legend>Theme</legend>
        <div className="row">
          {THEMES.map((t) => (
            <label key={t.value} className="check">
              <input
                type="radio"
                name="theme"
                value={t.value}
                checked={theme === t.value}
                onChange={() => void saveTheme(t.value)}
              />
              {t.label}
            </label>
          ))}
        </div>
      </fieldset>
      <ErrorBanner error={error} />
    </section>
  );
}

function PasswordCard() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const { busy, error, submit } = useBusy();
  const toast = useToast();
  return (
    <section className="card" aria-labelledby="password-h">
      <h2 id="password-h">Password</h2>
      <form
        className="stack"
        onSubmit={submit(async () => {
          ok(await api.POST('/account/password', { body: { current_password: current, new_password: next } }));
          setCurrent('');
          setNext('');
          toast({ title: 'Password changed', description: 'Your other sessions were signed out.', tone: 'success' });
        })}
      >
        <Field label="Current password">
          {(p) => (
            <input
              {...p}
              type="password"
              autoComplete="current-password"
              value={current}
              onChange={(e) => setCurrent(e.target.value)}
              required
            />
          )}
        </Field>
        <Field label="New password" hint="At least 10 characters. Your other sessions end.">
          {(p) => <NewPasswordInput {...p} value={next} onChange={(e) => setNext(e.target.value)} />}
        </Field>
        <ErrorBanner error={error} />
        <div>
          <Button type="submit" tone="primary" busy={busy}>
            Change password
          </Button>
        </div>
      </form>
    </section>
  );
}

function SessionsCard() {
  const { signOut } = useSession();
  const navigate = useNavigate();
  const toast = useToast();
  const sessions = useLoad(
    async () => ok(await api.GET('/account/sessions', { params: { query: { page: 1, limit: 100 } } })).data,
    'sessions',
  );
  return (
    <section className="card stack" aria-labelledby="sessions-h">
      <div className="page-header">
        <h2 id="sessions-h">Sessions</h2>
        <ConfirmDialog
          trigger={<Button tone="danger">Sign out everywhere</Button>}
          title="Sign out everywhere?"
          description="Every session of your account ends, this one too."
          confirmLabel="Sign out everywhere"
          onConfirm={async () => {
            ok(await api.POST('/auth/sign-out-everywhere'));
            await signOut().catch(() => undefined);
            navigate('/sign-in');
          }}
        />
      </div>
      <ErrorBanner error={sessions.error} onRetry={sessions.reload} />
      {sessions.loading ? (
        <Skeleton />
      ) : (
        <DataTable<AccountSession>
          caption="Your sessions"
          rows={sessions.data ?? []}
          rowKey={(s) => s.id}
          columns={[
            {
              key: 'device',
              header: 'Browser',
              cell: (s) => (
                <>
                  {s.user_agent ? shortAgent(s.user_agent) : 'Unknown'}{' '}
                  {s.current ? <span className="badge badge-ok">This session</span> : null}
                </>
              ),
            },
            { key: 'ip', header: 'Address', cell: (s) => s.ip ?? '—' },
            { key: 'created', header: 'Signed in', cell: (s) => <Time iso={s.created} /> },
            { key: 'seen', header: 'Last active', cell: (s) => <Time iso={s.last_seen} /> },
            { key: 'expires', header: 'Expires', cell: (s) => <Time iso={s.expires} /> },
            {
              key: 'actions',
              header: <span className="sr-only">Actions</span>,
              cell: (s) =>
                s.current ? null : (
                  <ConfirmDialog
                    trigger={<Button className="btn-small">Revoke</Button>}
                    title="Revoke this session?"
                    description="That browser is signed out at its next request."
                    confirmLabel="Revoke"
                    onConfirm={async () => {
                      ok(await api.DELETE('/account/sessions/{id}', { params: { path: { id: s.id } } }));
                      toast({ title: 'Session revoked', tone: 'success' });
                      sessions.reload();
                    }}
                  />
                ),
            },
          ]}
        />
      )}
    </section>
  );
}

/** "Chrome on Linux" from a User-Agent string, roughly. */
function shortAgent(ua: string): string {
  const browser = /Edg\//.test(ua)
    ? 'Edge'
    : /Firefox\//.test(ua)
      ? 'Firefox'
      : /Chrom(e|ium)\//.test(ua)
        ? 'Chrome'
        : /Safari\//.test(ua)
          ? 'Safari'
          : /curl|undici|node/i.test(ua)
            ? 'Program'
            : 'Browser';
  const os = /Windows/.test(ua)
    ? 'Windows'
    : /Mac OS X/.test(ua)
      ? 'macOS'
      : /Android/.test(ua)
        ? 'Android'
        : /iPhone|iPad/.test(ua)
          ? 'iOS'
          : /Linux/.test(ua)
            ? 'Linux'
            : '';
  return os ? `${browser} on ${os}` : browser;
}
