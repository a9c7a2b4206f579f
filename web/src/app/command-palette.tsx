import { Dialog } from 'radix-ui';
import { useEffect, useId, useMemo, useState, type KeyboardEvent } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api, ApiError, ok } from '../lib/api/client';
import { objectPath } from '../lib/event-types';
import { firstProject, membershipOf, permissionsFor, useSession, useSignedIn } from '../lib/session';
import { applyTheme } from '../lib/theme';
import { ErrorBanner } from '../components/error-banner';
import './command-palette.css';

// The command palette (Ctrl/⌘-K): jump to an object by its id (fetched through the API, so an id of
// another project or a deleted object says so instead of opening an empty page), to a page by name,
// or run a common action. A Radix dialog holding a combobox and its listbox (arrow keys, Enter, Esc).

interface Command {
  key: string;
  label: string;
  group: 'Open' | 'Page' | 'Action';
  keywords?: string;
  run: () => Promise<void> | void;
}

/** Id prefixes (src/ids.ts) the palette can open. */
const ID = /^(med|file|task|auto|evt|we|whd|key|prj)_[A-Za-z0-9]{16,40}$/;
const KINDS: Record<string, string> = {
  med: 'media',
  file: 'file',
  task: 'task',
  auto: 'automation',
  evt: 'event',
  we: 'webhook endpoint',
  whd: 'webhook delivery',
  key: 'API key',
  prj: 'project',
};

/** The app path of an object, after reading it through the API (which answers 404 for another project's). */
async function locate(projectId: string, id: string, projectIds: string[]): Promise<string> {
  const path = { params: { path: { id } } };
  const base = `/p/${projectId}`;
  if (id.startsWith('prj_')) {
    if (!projectIds.includes(id)) throw new Error(`You are not a member of project ${id}.`);
    return `/p/${id}/overview`;
  }
  if (id.startsWith('med_')) ok(await api.GET('/media/{id}', path));
  else if (id.startsWith('task_')) ok(await api.GET('/tasks/{id}', path));
  else if (id.startsWith('auto_')) ok(await api.GET('/automations/{id}', path));
  else if (id.startsWith('evt_')) ok(await api.GET('/events/{id}', path));
  else if (id.startsWith('we_')) ok(await api.GET('/webhooks/{id}', path));
  else if (id.startsWith('file_')) {
    const file = ok(await api.GET('/files/{id}', path)).data;
    return `${base}/media/${file.media_id}?file=${id}`;
  } else if (id.startsWith('key_')) {
    const keys = ok(await api.GET('/keys', { params: { query: { page: 1, limit: 100 } } })).data;
    if (!keys.some((k) => k.id === id)) throw new Error(`No API key ${id} in this project.`);
    return `${base}/keys?key=${id}`;
  } else if (id.startsWith('whd_')) {
    // A delivery is read under its endpoint: look for it under each of the project's endpoints.
    const endpoints = ok(await api.GET('/webhooks', { params: { query: { page: 1, limit: 100 } } })).data;
    for (const e of endpoints) {
      const list = ok(
        await api.GET('/webhooks/{id}/deliveries', { params: { path: { id: e.id }, query: { page: 1, limit: 100 } } }),
      ).data;
      if (list.some((d) => d.id === id)) return `${base}/webhooks/${e.id}?delivery=${id}`;
    }
    throw new Error(`No recent webhook delivery ${id} in this project.`);
  }
  const to = objectPath(projectId, id);
  if (!to) throw new Error(`mediad has no page for ${id}.`);
  return to;
}

function matches(c: Command, words: string[]): boolean {
  const hay = `${c.label} ${c.keywords ?? ''} ${c.group}`.toLowerCase();
  return words.every((w) => hay.includes(w));
}

export function CommandPalette() {
  const params = useParams();
  const session = useSignedIn();
  const { signOut, refresh } = useSession();
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const listId = useId();
  const inputId = useId();

  const inProject = params.projectId && membershipOf(session, params.projectId) ? params.projectId : null;
  const projectId = inProject ?? firstProject(session);
  const perms = permissionsFor(membershipOf(session, projectId ?? undefined)?.role);

  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        setOpen((o) => !o);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const commands = useMemo<Command[]>(() => {
    const list: Command[] = [];
    const go = (to: string) => () => navigate(to);
    if (projectId) {
      const p = `/p/${projectId}`;
      const pages: [string, string, string?, boolean?][] = [
        ['overview', 'Overview', 'home dashboard'],
        ['media', 'Media', 'library files upload'],
        ['tasks', 'Tasks', 'queue jobs failed'],
        ['automations', 'Automations', 'workflows triggers builder dry run'],
        ['events', 'Events', 'log history'],
        ['webhooks', 'Webhooks', 'endpoints deliveries signatures'],
        ['requests', 'Request log', 'logs api calls status curl'],
        ['usage', 'Usage', 'bytes storage delivered processing charts'],
        ['queue', 'Queue and workers', 'pause resume kinds workers heartbeat', true],
        ['system', 'System status', 'version ffmpeg engines doctor health'],
        ['keys', 'API keys', 'tokens', true],
        ['settings', 'Settings', 'project', true],
        ['admin', 'Organisation', 'members roles invitations projects admin', true],
        ['audit', 'Audit log', 'sign-ins history admin', true],
      ];
      for (const [path, label, keywords, manage] of pages)
        if (!manage || perms.canManage)
          list.push({ key: `page:${path}`, label, group: 'Page', keywords, run: go(`${p}/${path}`) });
    }
    list.push({
      key: 'page:account',
      label: 'Account',
      group: 'Page',
      keywords: 'profile password sessions',
      run: go('/account'),
    });
    list.push({
      key: 'page:docs',
      label: 'API reference',
      group: 'Page',
      keywords: 'docs openapi',
      run: () => window.location.assign('/docs'),
    });
    if (projectId && perms.canWrite) {
      const p = `/p/${projectId}`;
      list.push({
        key: 'act:upload',
        label: 'Upload media',
        group: 'Action',
        keywords: 'add file new',
        run: go(`${p}/media?upload=1`),
      });
      list.push({
        key: 'act:automation',
        label: 'New automation',
        group: 'Action',
        keywords: 'add create workflow',
        run: go(`${p}/automations/new`),
      });
      list.push({
        key: 'act:webhook',
        label: 'New webhook endpoint',
        group: 'Action',
        keywords: 'add create',
        run: go(`${p}/webhooks?new=1`),
      });
    }
    if (projectId && perms.canManage)
      list.push({
        key: 'act:key',
        label: 'New API key',
        group: 'Action',
        keywords: 'create token',
        run: go(`/p/${projectId}/keys?new=1`),
      });
    list.push({
      key: 'act:theme',
      label: 'Toggle dark theme',
      group: 'Action',
      keywords: 'light dark mode appearance',
      run: async () => {
        const theme = document.documentElement.classList.contains('dark') ? 'light' : 'dark';
        applyTheme(theme);
        ok(await api.PATCH('/account', { body: { theme } }));
        await refresh();
      },
    });
    list.push({
      key: 'act:signout',
      label: 'Sign out',
      group: 'Action',
      keywords: 'log out logout',
      run: async () => {
        await signOut();
        navigate('/sign-in');
      },
    });
    return list;
  }, [projectId, perms.canManage, perms.canWrite, navigate, refresh, signOut]);

  const trimmed = query.trim();
  const idMatch = ID.exec(trimmed);
  const shown: Command[] = [];
  if (idMatch && projectId) {
    const projects = session.memberships.flatMap((m) => m.projects.map((p) => p.id));
    shown.push({
      key: `open:${trimmed}`,
      label: `Open ${KINDS[idMatch[1]!] ?? 'object'} ${trimmed}`,
      group: 'Open',
      run: async () => navigate(await locate(projectId, trimmed, projects)),
    });
  }
  const words = trimmed.toLowerCase().split(/\s+/).filter(Boolean);
  if (!idMatch) shown.push(...commands.filter((c) => matches(c, words)));
  const current = Math.min(active, Math.max(0, shown.length - 1));

  const close = () => {
    setOpen(false);
    setQuery('');
    setActive(0);
    setError(null);
  };

  const run = async (c: Command | undefined) => {
    if (!c || busy) return;
    setBusy(true);
    setError(null);
    try {
      await c.run();
      close();
    } catch (err) {
      setError(
        err instanceof ApiError && err.code === 'not_found'
          ? new ApiError({ code: 'not_found', message: `Nothing with the id ${trimmed} in this project.`, status: 404 })
          : err,
      );
    } finally {
      setBusy(false);
    }
  };

  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'ArrowDown') {
      e.preventDefault();
      setActive((current + 1) % Math.max(1, shown.length));
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      setActive((current - 1 + shown.length) % Math.max(1, shown.length));
    } else if (e.key === 'Enter') {
      e.preventDefault();
      void run(shown[current]);
    }
  };

  const optionId = (i: number) => `${listId}-${i}`;

  return (
    <Dialog.Root
      open={open}
      onOpenChange={(o) => {
        if (o) setOpen(true);
        else close();
      }}
    >
      <Dialog.Trigger asChild>
        <button type="button" className="btn palette-trigger" aria-keyshortcuts="Control+K Meta+K">
          <span>Search or jump to…</span>
          <kbd aria-hidden="true">Ctrl K</kbd>
        </button>
      </Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="dialog-overlay" />
        <Dialog.Content className="dialog palette" aria-describedby={undefined}>
          <Dialog.Title className="sr-only">Command palette</Dialog.Title>
          <label htmlFor={inputId} className="sr-only">
            Page, action, or an id such as med_…
          </label>
          <input
            id={inputId}
            role="combobox"
            aria-expanded="true"
            aria-controls={listId}
            aria-autocomplete="list"
            aria-activedescendant={shown.length > 0 ? optionId(current) : undefined}
            placeholder="Type a page or action, or paste an id (med_…, task_…, we_…)"
            value={query}
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => {
              setQuery(e.target.value);
              setActive(0);
              setError(null);
            }}
            onKeyDown={onKeyDown}
            aria-busy={busy || undefined}
          />
          <ul id={listId} role="listbox" aria-label="Commands" className="palette-list">
            {shown.map((c, i) => (
              <li
                key={c.key}
                id={optionId(i)}
                role="option"
                aria-selected={i === current}
                className="palette-item"
                onMouseMove={() => setActive(i)}
                onMouseDown={(e) => e.preventDefault()}
                onClick={() => void run(c)}
              >
                <span>{c.label}</span>
                <span className="palette-group">{c.group}</span>
              </li>
            ))}
          </ul>
          {shown.length === 0 ? (
            <p className="muted small" role="status">
              Nothing matches. Ids start with med_, file_, task_, auto_, evt_, we_, whd_, key_ or prj_.
            </p>
          ) : null}
          <ErrorBanner error={error} />
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
