import type { SessionsTable, UsersTable } from '../db/schema.js';

// People as the API shows them: a user (never the password hash) and a session (never its token).

export function toUserObject(u: UsersTable) {
  return {
    id: u.id,
    object: 'user' as const,
    email: u.email,
    name: u.name,
    is_admin: u.is_admin === 1,
    theme: u.theme,
    status: u.status,
    created: u.created,
    last_sign_in: u.last_sign_in ?? undefined,
  };
}
export type UserObject = ReturnType<typeof toUserObject>;

export function toSessionObject(s: SessionsTable, currentId: string) {
  return {
    id: s.id,
    object: 'session' as const,
    created: s.created,
    last_seen: s.last_seen,
    expires: s.expires,
    user_agent: s.user_agent ?? undefined,
    ip: s.ip ?? undefined,
    current: s.id === currentId,
  };
}
export type SessionObject = ReturnType<typeof toSessionObject>;
