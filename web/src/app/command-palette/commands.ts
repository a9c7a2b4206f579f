import { useMemo } from 'react';
import { useNavigate } from 'react-router';
import { api, ok } from '../../lib/api/client';
import { membershipOf, permissionsFor, useSession, useSignedIn } from '../../lib/session';
import { applyTheme } from '../../lib/theme';

// What the palette offers by name: the project's pages (those for owners and admins only to them),
// the account, the API reference, and common actions.

export interface Command {
  key: string;
  label: string;
  group: 'Open' | 'Page' | 'Action';
  keywords?: string;
  run: () => Promise<void> | void;
}

export function matches(c: Command, words: string[]): boolean {
  const hay = `${c.label} ${c.keywords ?? ''} ${c.group}`.toLowerCase();
  return words.every((w) => hay.includes(w));
}

/** The commands for this person in `projectId` (none of the project's without one). */
export function useCommands(projectId: string | null): Command[] {
  const session = useSignedIn();
  const { signOut, refresh } = useSession();
  const navigate = useNavigate();
  const perms = permissionsFor(membershipOf(session, projectId ?? undefined)?.role);
  return useMemo<Command[]>(() => {
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
}
