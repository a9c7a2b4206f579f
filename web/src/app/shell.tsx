import { DropdownMenu } from 'radix-ui';
import { useState, type ReactNode } from 'react';
import { Link, NavLink, Outlet, useNavigate, useParams } from 'react-router';
import { api, ok } from '../lib/api/client';
import type { Theme } from '../lib/api/types';
import { membershipOf, permissionsFor, useSession, useSignedIn } from '../lib/session';
import { applyTheme } from '../lib/theme';
import { CommandPalette } from './command-palette/command-palette';
import { useToast } from '../components/toast';
import { Button } from '../components/button';
import { ErrorBanner } from '../components/error-banner';
import { Field } from '../components/field';
import { FormDialog } from '../components/form-dialog';
import { useBusy } from '../lib/use-busy';

// The signed-in frame: a sidebar with the project's pages, a header with the project switcher
// (organisation → projects, create a project) and the user menu (account, theme, sign out).

const THEMES: Theme[] = ['light', 'dark', 'system'];

const NAV: { to: string; label: string; manage?: boolean }[] = [
  { to: 'overview', label: 'Overview' },
  { to: 'media', label: 'Media' },
  { to: 'tasks', label: 'Tasks' },
  { to: 'automations', label: 'Automations' },
  { to: 'events', label: 'Events' },
  { to: 'webhooks', label: 'Webhooks' },
  { to: 'requests', label: 'Request log' },
  { to: 'usage', label: 'Usage' },
  { to: 'queue', label: 'Queue and workers', manage: true },
  { to: 'system', label: 'System status' },
  { to: 'keys', label: 'API keys', manage: true },
  { to: 'settings', label: 'Settings', manage: true },
  { to: 'admin', label: 'Organisation', manage: true },
  { to: 'audit', label: 'Audit log', manage: true },
];

export function Shell({ children }: { children?: ReactNode }) {
  const { projectId } = useParams();
  const session = useSignedIn();
  const perms = permissionsFor(membershipOf(session, projectId)?.role);
  // On a narrow screen the sidebar folds behind the "Menu" button; choosing a page folds it again.
  const [navOpen, setNavOpen] = useState(false);
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <aside
        id="sidebar"
        className="sidebar"
        aria-label="Sidebar"
        data-open={navOpen}
        onKeyDown={(e) => {
          if (e.key === 'Escape') setNavOpen(false);
        }}
      >
        <button type="button" className="btn nav-close" onClick={() => setNavOpen(false)}>
          Close menu
        </button>
        <Link to={projectId ? `/p/${projectId}/overview` : '/'} className="brand">
          <svg viewBox="0 0 32 32" width="22" height="22" aria-hidden="true">
            <rect width="32" height="32" rx="7" fill="currentColor" />
            <path d="M12 9v14l11-7z" fill="var(--bg)" />
          </svg>
          mediad
        </Link>
        {projectId ? (
          <nav aria-label="Project" onClick={() => setNavOpen(false)}>
            <ul>
              {NAV.filter((n) => !n.manage || perms.canManage).map((n) => (
                <li key={n.to}>
                  <NavLink to={`/p/${projectId}/${n.to}`}>{n.label}</NavLink>
                </li>
              ))}
            </ul>
          </nav>
        ) : null}
        <nav aria-label="Help" className="sidebar-foot">
          <a href="/docs">API reference</a>
        </nav>
      </aside>
      <div className="main-col">
        <header className="topbar">
          <button
            type="button"
            className="btn nav-toggle"
            aria-controls="sidebar"
            aria-expanded={navOpen}
            onClick={() => setNavOpen((o) => !o)}
          >
            Menu
          </button>
          <ProjectSwitcher />
          <CommandPalette />
          <UserMenu />
        </header>
        <main id="main" tabIndex={-1}>
          {children ?? <Outlet />}
        </main>
      </div>
    </div>
  );
}

function ProjectSwitcher() {
  const { projectId } = useParams();
  const session = useSignedIn();
  const navigate = useNavigate();
  const [createIn, setCreateIn] = useState<string | null>(null);
  const current = session.memberships
    .flatMap((m) => m.projects.map((p) => ({ ...p, org: m.org })))
    .find((p) => p.id === projectId);
  return (
    <>
      <DropdownMenu.Root>
        <DropdownMenu.Trigger asChild>
          <button type="button" className="btn switcher">
            <span className="sr-only">Switch project: </span>
            <span className="muted">{current?.org.name ?? 'No project'}</span>
            <span aria-hidden="true">/</span>
            <strong>{current?.name ?? 'Choose a project'}</strong>
            <span aria-hidden="true">▾</span>
          </button>
        </DropdownMenu.Trigger>
        <DropdownMenu.Portal>
          <DropdownMenu.Content className="menu" align="start" sideOffset={6}>
            {session.memberships.map((m) => (
              <DropdownMenu.Group key={m.org.id}>
                <DropdownMenu.Label className="menu-label">
                  {m.org.name} <span className="badge">{m.role}</span>
                </DropdownMenu.Label>
                {m.projects.map((p) => (
                  <DropdownMenu.Item key={p.id} className="menu-item" onSelect={() => navigate(`/p/${p.id}/overview`)}>
                    {p.id === projectId ? '✓ ' : ''}
                    {p.name}
                  </DropdownMenu.Item>
                ))}
                {permissionsFor(m.role).canManage ? (
                  <DropdownMenu.Item className="menu-item" onSelect={() => setCreateIn(m.org.id)}>
                    + New project in {m.org.name}
                  </DropdownMenu.Item>
                ) : null}
                <DropdownMenu.Separator className="menu-sep" />
              </DropdownMenu.Group>
            ))}
          </DropdownMenu.Content>
        </DropdownMenu.Portal>
      </DropdownMenu.Root>
      <CreateProjectDialog orgId={createIn} onClose={() => setCreateIn(null)} />
    </>
  );
}

function CreateProjectDialog({ orgId, onClose }: { orgId: string | null; onClose: () => void }) {
  const [name, setName] = useState('');
  const { busy, error, setError, submit } = useBusy();
  const { refresh } = useSession();
  const navigate = useNavigate();
  const toast = useToast();
  return (
    <FormDialog
      open={orgId !== null}
      onOpenChange={(o) => {
        if (!o) {
          setName('');
          setError(null);
          onClose();
        }
      }}
      title="New project"
      description="A project has its own media, tasks, keys and webhooks."
    >
      <form
        onSubmit={submit(async () => {
          if (!orgId) return;
          const made = ok(
            await api.POST('/orgs/{id}/projects', { params: { path: { id: orgId } }, body: { name } }),
          ).data;
          await refresh();
          toast({ title: `Project ${made.name} created`, tone: 'success' });
          onClose();
          setName('');
          navigate(`/p/${made.id}/overview`);
        })}
      >
        <Field label="Name">
          {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />}
        </Field>
        <ErrorBanner error={error} />
        <div className="dialog-actions">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" tone="primary" busy={busy}>
            Create project
          </Button>
        </div>
      </form>
    </FormDialog>
  );
}

function UserMenu() {
  const session = useSignedIn();
  const { signOut, refresh } = useSession();
  const navigate = useNavigate();
  const toast = useToast();
  const setTheme = async (theme: Theme) => {
    applyTheme(theme);
    try {
      ok(await api.PATCH('/account', { body: { theme } }));
      await refresh();
    } catch {
      toast({ title: 'The theme could not be saved to your account', tone: 'error' });
    }
  };
  return (
    <DropdownMenu.Root>
      <DropdownMenu.Trigger asChild>
        <button type="button" className="btn user-button">
          <span className="sr-only">Account menu: </span>
          <span className="avatar" aria-hidden="true">
            {session.user.name.slice(0, 1).toUpperCase()}
          </span>
          {session.user.name}
        </button>
      </DropdownMenu.Trigger>
      <DropdownMenu.Portal>
        <DropdownMenu.Content className="menu" align="end" sideOffset={6}>
          <DropdownMenu.Label className="menu-label">{session.user.email}</DropdownMenu.Label>
          <DropdownMenu.Item className="menu-item" onSelect={() => navigate('/account')}>
            Account
          </DropdownMenu.Item>
          <DropdownMenu.Separator className="menu-sep" />
          <DropdownMenu.Label className="menu-label">Theme</DropdownMenu.Label>
          <DropdownMenu.RadioGroup
            value={session.user.theme}
            onValueChange={(v) => void setTheme(v === 'light' || v === 'dark' ? v : 'system')}
          >
            {THEMES.map((t) => (
              <DropdownMenu.RadioItem key={t} value={t} className="menu-item">
                <DropdownMenu.ItemIndicator>✓ </DropdownMenu.ItemIndicator>
                {t[0]!.toUpperCase() + t.slice(1)}
              </DropdownMenu.RadioItem>
            ))}
          </DropdownMenu.RadioGroup>
          <DropdownMenu.Separator className="menu-sep" />
          <DropdownMenu.Item
            className="menu-item"
            onSelect={async () => {
              await signOut();
              navigate('/sign-in');
            }}
          >
            Sign out
          </DropdownMenu.Item>
        </DropdownMenu.Content>
      </DropdownMenu.Portal>
    </DropdownMenu.Root>
  );
}
