import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import type { Database, SessionsTable, UsersTable } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { newId } from '../../ids.js';
import { hashKey } from './keys.js';
import { toSessionObject, type SessionObject } from '../../shapes/people.js';

// Sign-in sessions of the web application, kept in the database like API keys: the cookie holds
// an opaque 256-bit token, the table only its SHA-256, so sessions can be listed and revoked
// ("sign out everywhere"). A session ends after an idle time and in any case after a maximum
// age; each sign-in makes a new one.

/** `__Host-`: the browser keeps it only if it is Secure, Path=/ and without Domain (no subdomain can set it). */
export const SESSION_COOKIE = '__Host-mediad_session';

const LAST_SEEN_EVERY_MS = 60_000;

export interface SessionMeta {
  userAgent?: string;
  ip?: string;
}

export interface StartedSession {
  token: string;
  session: SessionsTable;
}

/** A new session of the user; the token goes in the cookie and is never stored. */
export async function startSession(
  trx: Kysely<Database>,
  deps: Pick<Deps, 'clock' | 'config'>,
  userId: string,
  meta: SessionMeta,
): Promise<StartedSession> {
  const now = deps.clock.now();
  const token = randomBytes(32).toString('base64url');
  const session: SessionsTable = {
    id: newId('session'),
    token_hash: hashKey(token),
    user_id: userId,
    csrf_token: randomBytes(24).toString('base64url'),
    user_agent: meta.userAgent?.slice(0, 300) ?? null,
    ip: meta.ip ?? null,
    created: iso(now),
    last_seen: iso(now),
    expires: iso(new Date(now.getTime() + deps.config.accounts.sessionMaxMs)),
    revoked: null,
  };
  await trx.insertInto('sessions').values(session).execute();
  return { token, session };
}

/** The live session of a cookie token and its user, or null (unknown, revoked, idle too long, past its maximum age, user disabled). */
export async function findSession(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  token: string,
): Promise<{ session: SessionsTable; user: UsersTable } | null> {
  if (token.length < 20 || token.length > 100) return null;
  const session = await deps.db
    .selectFrom('sessions')
    .selectAll()
    .where('token_hash', '=', hashKey(token))
    .where('revoked', 'is', null)
    .executeTakeFirst();
  if (!session) return null;
  const now = deps.clock.now().getTime();
  if (Date.parse(session.expires) <= now || Date.parse(session.last_seen) + deps.config.accounts.sessionIdleMs <= now)
    return null;
  const user = await deps.db.selectFrom('users').selectAll().where('id', '=', session.user_id).executeTakeFirst();
  if (!user || user.status !== 'active') return null;
  if (Date.parse(session.last_seen) + LAST_SEEN_EVERY_MS < now) {
    await deps.db
      .updateTable('sessions')
      .set({ last_seen: iso(deps.clock.now()) })
      .where('id', '=', session.id)
      .execute();
  }
  return { session, user };
}

export async function endSession(db: Kysely<Database>, sessionId: string, now: string): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ revoked: now })
    .where('id', '=', sessionId)
    .where('revoked', 'is', null)
    .execute();
}

/** Ends every session of the user (but `except`, the one asking, when given). */
export async function endUserSessions(
  db: Kysely<Database>,
  userId: string,
  now: string,
  except?: string,
): Promise<void> {
  let q = db.updateTable('sessions').set({ revoked: now }).where('user_id', '=', userId).where('revoked', 'is', null);
  if (except) q = q.where('id', '!=', except);
  await q.execute();
}

/** The user's live sessions, newest first. */
export async function listSessions(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  userId: string,
  currentId: string,
): Promise<SessionObject[]> {
  const now = deps.clock.now().getTime();
  const rows = await deps.db
    .selectFrom('sessions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('revoked', 'is', null)
    .orderBy('created', 'desc')
    .limit(100)
    .execute();
  return rows
    .filter((s) => Date.parse(s.expires) > now && Date.parse(s.last_seen) + deps.config.accounts.sessionIdleMs > now)
    .map((s) => toSessionObject(s, currentId));
}

export async function revokeSession(deps: Pick<Deps, 'db' | 'clock'>, userId: string, id: string): Promise<void> {
  const res = await deps.db
    .updateTable('sessions')
    .set({ revoked: iso(deps.clock.now()) })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('revoked', 'is', null)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) throw new AppError('not_found', `no session ${id} of yours`);
}
