import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import type { Database, Role, UsersTable } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/errors.js';
import { transact } from '../../db/transact.js';
import { AppError } from '../../errors.js';
import { newId } from '../../ids.js';
import { toKeyObject, type KeyObject } from '../../shapes/keys.js';
import { toProjectObject } from '../../shapes/projects.js';
import { toUserObject, type UserObject } from '../../shapes/people.js';
import { hashKey, issueKey } from './keys.js';
import { addMember, ensureProject, insertOrg, insertProject } from './orgs.js';
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from './passwords.js';
import { recordAudit, recordUserAudit, userActor } from '../audit.js';
import { endSession, endUserSessions, startSession, type SessionMeta, type StartedSession } from './sessions.js';

// People: the first owner made through the one-time setup URL, users made by operators
// (mediad users …), sign-in with a password, and changes to one's own account.

type Db = Kysely<Database>;

const normaliseEmail = (email: string) => email.trim().toLowerCase();

function checkPassword(password: string, field = 'password'): void {
  const problem = passwordProblem(password);
  if (problem)
    throw new AppError('validation_failed', `the password ${problem}`, { details: [{ field, message: problem }] });
}

export interface NewUser {
  email: string;
  name: string;
  password: string;
  isAdmin?: boolean;
}

export async function insertUser(trx: Db, deps: Pick<Deps, 'config'>, u: NewUser, now: string): Promise<UsersTable> {
  checkPassword(u.password);
  const row: UsersTable = {
    id: newId('user'),
    email: normaliseEmail(u.email),
    name: u.name.trim(),
    password_hash: await hashPassword(u.password, deps.config.accounts.passwordLogN),
    status: 'active',
    is_admin: u.isAdmin ? 1 : 0,
    theme: 'system',
    created: now,
    updated: now,
    last_sign_in: null,
  };
  try {
    await trx.insertInto('users').values(row).execute();
  } catch (err) {
    if (isUniqueViolation(err))
      throw new AppError('conflict', `a user with the email ${row.email} exists`, {
        details: [{ field: 'email', message: 'taken' }],
      });
    throw err;
  }
  return row;
}

async function anyUser(db: Db): Promise<boolean> {
  return (await db.selectFrom('users').select('id').limit(1).executeTakeFirst()) !== undefined;
}

/**
 * While no user exists: a one-time setup token for the URL printed at start (every process that
 * starts makes one, and any works until the first setup), null once someone has set mediad up.
 */
export async function newSetupToken(deps: Pick<Deps, 'db' | 'clock'>): Promise<string | null> {
  if (await anyUser(deps.db)) return null;
  const token = randomBytes(32).toString('base64url');
  await deps.db
    .insertInto('setup_tokens')
    .values({ token_hash: hashKey(token), created: iso(deps.clock.now()), used: null })
    .execute();
  return token;
}

export async function setupRequired(deps: Pick<Deps, 'db'>): Promise<boolean> {
  return !(await anyUser(deps.db));
}

export interface SetupInput {
  token: string;
  email: string;
  name: string;
  password: string;
  org: string;
  project: string;
}

/**
 * First run: with the setup URL's token, the first owner (an instance administrator), their
 * organisation and project, a full-access API key (shown once) and a session. The whole of it
 * happens in one transaction that first checks no user exists, so two setups cannot both win.
 */
export async function setUp(deps: Pick<Deps, 'db' | 'clock' | 'config'>, input: SetupInput, meta: SessionMeta) {
  checkPassword(input.password);
  return transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    if (await anyUser(trx)) throw new AppError('conflict', 'mediad is set up already; sign in instead');
    const used = await trx
      .updateTable('setup_tokens')
      .set({ used: now })
      .where('token_hash', '=', hashKey(input.token))
      .where('used', 'is', null)
      .executeTakeFirst();
    if (Number(used.numUpdatedRows) === 0)
      throw new AppError(
        'unauthorized',
        'the setup link is not valid: use the one in the server log (mediad serve prints it at start until someone has set mediad up)',
      );
    const user = await insertUser(
      trx,
      deps,
      { email: input.email, name: input.name, password: input.password, isAdmin: true },
      now,
    );
    const org = await insertOrg(trx, input.org.trim(), now);
    await addMember(trx, user.id, org.id, 'owner', now);
    const project = await insertProject(trx, org.id, input.project.trim(), now);
    const { row, key } = await issueKey(trx, project.id, { name: 'First key', createdBy: user.id }, now);
    const session = await startSession(trx, deps, user.id, meta);
    await recordAudit(
      trx,
      {
        orgId: org.id,
        projectId: project.id,
        actor: userActor(user.id, meta.ip),
        action: 'auth.setup',
        target: { type: 'user', id: user.id },
        details: { email: user.email, org: org.name, project: project.name, key_id: row.id },
      },
      now,
    );
    const projectRow = await trx
      .selectFrom('projects')
      .selectAll()
      .where('id', '=', project.id)
      .executeTakeFirstOrThrow();
    return {
      user: toUserObject(user),
      org: { id: org.id, object: 'org' as const, name: org.name, role: 'owner' as Role, created: now },
      project: toProjectObject(projectRow),
      key: { ...toKeyObject(row), key } as KeyObject & { key: string },
      session,
    };
  });
}

/**
 * Signs in with email and password: a new session (and the one the cookie held before, if any,
 * ends: sessions rotate at sign-in). The same error whether the email exists or not, after the
 * same work: an unknown email is checked against a decoy hash.
 */
export async function signIn(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  email: string,
  password: string,
  meta: SessionMeta,
  previousSessionId?: string,
): Promise<{ user: UsersTable } & StartedSession> {
  const user = await deps.db
    .selectFrom('users')
    .selectAll()
    .where('email', '=', normaliseEmail(email))
    .executeTakeFirst();
  const ok = await verifyPassword(
    password,
    user?.password_hash ?? (await decoyHash(deps.config.accounts.passwordLogN)),
  );
  if (!user || !ok || user.status !== 'active') {
    const reason = !user ? 'unknown_email' : !ok ? 'wrong_password' : 'disabled';
    await recordSignInFailure(deps, { userId: user?.id ?? null, email, reason, method: 'password', ip: meta.ip });
    throw new AppError('invalid_credentials', 'the email or the password is wrong (or the account is disabled)');
  }
  return openSession(deps, user, meta, previousSessionId);
}

/**
 * Records a refused sign-in (the email tried, never a password) in the user's organisations when
 * the account is known, else in no organisation.
 */
export async function recordSignInFailure(
  deps: Pick<Deps, 'db' | 'clock'>,
  f: { userId: string | null; email: string | null; reason: string; method: 'password' | 'oidc'; ip?: string },
): Promise<void> {
  await transact(deps.db, async (trx) => {
    const failure = {
      actor: { type: 'anonymous' as const, id: null, ip: f.ip ?? null },
      action: 'auth.sign_in_failed' as const,
      target: f.userId ? { type: 'user', id: f.userId } : null,
      details: { email: f.email?.slice(0, 254), reason: f.reason, method: f.method },
    };
    const now = iso(deps.clock.now());
    if (f.userId) await recordUserAudit(trx, f.userId, failure, now);
    else await recordAudit(trx, { ...failure, orgId: null }, now);
  });
}

/**
 * A signed-in user's new session, whatever way they proved who they are (a password, the OpenID
 * Connect provider): the session the browser held before ends, so no session id survives a sign-in.
 */
export async function openSession(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  user: UsersTable,
  meta: SessionMeta,
  previousSessionId?: string,
): Promise<{ user: UsersTable } & StartedSession> {
  return transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    if (previousSessionId)
      await trx
        .updateTable('sessions')
        .set({ revoked: now })
        .where('id', '=', previousSessionId)
        .where('user_id', '=', user.id)
        .execute();
    await trx.updateTable('users').set({ last_sign_in: now }).where('id', '=', user.id).execute();
    const started = await startSession(trx, deps, user.id, meta);
    await recordUserAudit(
      trx,
      user.id,
      {
        actor: userActor(user.id, meta.ip),
        action: 'auth.sign_in',
        target: { type: 'session', id: started.session.id },
        details: { email: user.email },
      },
      now,
    );
    return { user, ...started };
  });
}

export async function getUser(deps: Pick<Deps, 'db'>, userId: string): Promise<UsersTable> {
  const user = await deps.db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
  if (!user) throw new AppError('not_found', 'no such user');
  return user;
}

export async function updateAccount(
  deps: Pick<Deps, 'db' | 'clock'>,
  userId: string,
  patch: { name?: string; theme?: UsersTable['theme'] },
): Promise<UserObject> {
  const set: Partial<UsersTable> = { updated: iso(deps.clock.now()) };
  if (patch.name !== undefined) set.name = patch.name.trim();
  if (patch.theme !== undefined) set.theme = patch.theme;
  await deps.db.updateTable('users').set(set).where('id', '=', userId).execute();
  return toUserObject(await getUser(deps, userId));
}

/** A new password, after the current one; the user's other sessions end. */
export async function changePassword(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  userId: string,
  current: string,
  next: string,
  keepSessionId: string,
  ip?: string,
): Promise<void> {
  checkPassword(next, 'new_password');
  const user = await getUser(deps, userId);
  if (!(await verifyPassword(current, user.password_hash)))
    throw new AppError('invalid_credentials', 'the current password is wrong', {
      details: [{ field: 'current_password', message: 'wrong' }],
    });
  const hash = await hashPassword(next, deps.config.accounts.passwordLogN);
  await transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    await trx.updateTable('users').set({ password_hash: hash, updated: now }).where('id', '=', userId).execute();
    await endUserSessions(trx, userId, now, keepSessionId);
    await recordUserAudit(
      trx,
      userId,
      { actor: userActor(userId, ip), action: 'account.password_changed', target: { type: 'user', id: userId } },
      now,
    );
  });
}

// Operators (mediad users …).

/** A user with a role in an organisation (made when missing, with a first project). */
export async function createUserInOrg(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  u: NewUser & { org: string; role: Role },
): Promise<UserObject> {
  return transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    const user = await insertUser(trx, deps, u, now);
    const existing = await trx.selectFrom('orgs').select(['id']).where('name', '=', u.org.trim()).executeTakeFirst();
    const org = existing ?? (await ensureProject(trx, u.org.trim(), 'default', now)).org;
    await addMember(trx, user.id, org.id, u.role, now);
    return toUserObject(user);
  });
}

export async function listUsers(deps: Pick<Deps, 'db'>) {
  const users = await deps.db.selectFrom('users').selectAll().orderBy('created').execute();
  const roles = await deps.db
    .selectFrom('memberships')
    .innerJoin('orgs', 'orgs.id', 'memberships.org_id')
    .select(['memberships.user_id', 'orgs.name', 'memberships.role'])
    .execute();
  return users.map((u) => ({
    ...toUserObject(u),
    orgs: roles.filter((r) => r.user_id === u.id).map((r) => `${r.name}:${r.role}`),
  }));
}

async function byEmail(db: Db, email: string): Promise<UsersTable> {
  const user = await db.selectFrom('users').selectAll().where('email', '=', normaliseEmail(email)).executeTakeFirst();
  if (!user) throw new AppError('not_found', `no user with the email ${email} (see mediad users list)`);
  return user;
}

/** A new password (given, or generated and returned); every session of the user ends. */
export async function resetPassword(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  email: string,
  password?: string,
): Promise<string> {
  const next = password ?? randomBytes(12).toString('base64url');
  checkPassword(next);
  const user = await byEmail(deps.db, email);
  const hash = await hashPassword(next, deps.config.accounts.passwordLogN);
  await transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    await trx
      .updateTable('users')
      .set({ password_hash: hash, status: 'active', updated: now })
      .where('id', '=', user.id)
      .execute();
    await endUserSessions(trx, user.id, now);
  });
  return next;
}

/** A disabled user cannot sign in, and their sessions end. */
export async function disableUser(deps: Pick<Deps, 'db' | 'clock'>, email: string): Promise<void> {
  const user = await byEmail(deps.db, email);
  await transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    await trx.updateTable('users').set({ status: 'disabled', updated: now }).where('id', '=', user.id).execute();
    await endUserSessions(trx, user.id, now);
  });
}

/** Signs out: this session, or with `everywhere` every session of the user; recorded in the audit log. */
export async function signOut(
  deps: Pick<Deps, 'db' | 'clock'>,
  userId: string,
  sessionId: string,
  everywhere: boolean,
  ip?: string,
): Promise<void> {
  await transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    if (everywhere) await endUserSessions(trx, userId, now);
    else await endSession(trx, sessionId, now);
    await recordUserAudit(
      trx,
      userId,
      {
        actor: userActor(userId, ip),
        action: 'auth.sign_out',
        target: { type: 'session', id: sessionId },
        details: { everywhere },
      },
      now,
    );
  });
}
