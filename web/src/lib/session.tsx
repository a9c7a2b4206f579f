import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, ok, setCsrfToken } from './api/client';
import type { Membership, Role, SessionInfo, Theme } from './api/types';
import { applyTheme } from './theme';
import { rememberLocalCa } from './local-ca';

// Who is signed in (GET /auth/session), whether mediad still needs its first-run setup
// (GET /auth/status), and what the person's role lets them do in a project.

export type SessionState =
  | { status: 'loading' }
  | { status: 'setup' }
  | { status: 'signed-out' }
  | { status: 'signed-in'; session: SessionInfo };

interface SessionContextValue {
  state: SessionState;
  /** Loads the session again (after sign-in, setup, a new project, a theme change). */
  refresh(): Promise<SessionState>;
  /** Uses an answer that already carries the session (sign-in, setup). */
  adopt(session: SessionInfo): void;
  signOut(): Promise<void>;
}

const SessionContext = createContext<SessionContextValue | null>(null);

async function load(): Promise<SessionState> {
  const status = ok(await api.GET('/auth/status'));
  rememberLocalCa(status.data.local_ca);
  if (status.data.setup_required) return { status: 'setup' };
  if (!status.data.signed_in) return { status: 'signed-out' };
  try {
    const session = ok(await api.GET('/auth/session')).data;
    return { status: 'signed-in', session };
  } catch {
    return { status: 'signed-out' };
  }
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<SessionState>({ status: 'loading' });

  const set = useCallback((next: SessionState) => {
    setCsrfToken(next.status === 'signed-in' ? next.session.csrf_token : null);
    if (next.status === 'signed-in') applyTheme(next.session.user.theme);
    setState(next);
  }, []);

  const refresh = useCallback(async () => {
    const next = await load();
    set(next);
    return next;
  }, [set]);

  useEffect(() => {
    load().then(set, () => set({ status: 'signed-out' }));
  }, [set]);

  const value = useMemo<SessionContextValue>(
    () => ({
      state,
      refresh,
      adopt: (session) => set({ status: 'signed-in', session }),
      async signOut() {
        try {
          await api.POST('/auth/sign-out');
        } finally {
          set({ status: 'signed-out' });
        }
      },
    }),
    [state, refresh, set],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionContextValue {
  const ctx = useContext(SessionContext);
  if (!ctx) throw new Error('useSession outside SessionProvider');
  return ctx;
}

/** The signed-in session (inside the auth guard). */
export function useSignedIn(): SessionInfo {
  const { state } = useSession();
  if (state.status !== 'signed-in') throw new Error('useSignedIn outside the auth guard');
  return state.session;
}

/** The membership (organisation and role) that holds a project. */
export function membershipOf(session: SessionInfo, projectId: string | undefined): Membership | undefined {
  return session.memberships.find((m) => m.projects.some((p) => p.id === projectId));
}

export interface Permissions {
  role: Role | null;
  /** Files, media, tasks, automations, webhooks: owner, admin, member. */
  canWrite: boolean;
  /** API keys, members and project settings: owner and admin. */
  canManage: boolean;
}

/** What the person may do in a project, as the API will enforce it (src/services/access.ts). */
export function permissionsFor(role: Role | null | undefined): Permissions {
  const r = role ?? null;
  return {
    role: r,
    canWrite: r === 'owner' || r === 'admin' || r === 'member',
    canManage: r === 'owner' || r === 'admin',
  };
}

/** The first project the person can open, for redirects. */
export function firstProject(session: SessionInfo): string | null {
  for (const m of session.memberships) {
    const p = m.projects[0];
    if (p) return p.id;
  }
  return null;
}

export type { Theme };
