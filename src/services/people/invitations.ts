import { randomBytes } from 'node:crypto';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import type { InvitationsTable, Role, UsersTable } from '../../db/schema.js';
import { transact } from '../../db/transact.js';
import { AppError } from '../../errors.js';
import { newId } from '../../ids.js';
import { recordAudit, userActor, type Actor } from '../audit.js';
import { hashKey } from './keys.js';
import { requireRole, type Admin } from './org-admin.js';
import { addMember } from './orgs.js';
import { startSession, type SessionMeta, type StartedSession } from './sessions.js';
import { insertUser } from './users.js';

// Invitations to an organisation: a one-time link (the token in its fragment, only its hash
// stored) valid MEDIAD_INVITATION_HOURS, that makes a new user or adds the signed-in one.

const normaliseEmail = (email: string) => email.trim().toLowerCase();

function status(row: InvitationsTable, now: number): 'pending' | 'accepted' | 'revoked' | 'expired' {
  if (row.accepted) return 'accepted';
  if (row.revoked) return 'revoked';
  return Date.parse(row.expires) <= now ? 'expired' : 'pending';
}

export function toInvitationObject(row: InvitationsTable, now: number, url?: string) {
  return {
    id: row.id,
    object: 'invitation' as const,
    org_id: row.org_id,
    email: row.email,
    role: row.role,
    status: status(row, now),
    created_by: row.created_by ?? undefined,
    created: row.created,
    expires: row.expires,
    accepted: row.accepted ?? undefined,
    revoked: row.revoked ?? undefined,
    /** The link itself: only in the answer that makes it. */
    url,
  };
}
export type InvitationObject = ReturnType<typeof toInvitationObject>;

/** A new invitation (owners and admins; only owners invite owners); the link is shown once. */
export async function createInvitation(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  user: Admin,
  orgId: string,
  input: { email: string; role: Role },
  actor: Actor,
): Promise<InvitationObject> {
  const acting = await requireRole(deps.db, user, orgId, ['owner', 'admin'], 'invite people');
  if (input.role === 'owner' && acting !== 'owner')
    throw new AppError('insufficient_role', `your role (${acting}) may not invite owners; ask an owner`);
  const email = normaliseEmail(input.email);
  return transact(deps.db, async (trx) => {
    const now = deps.clock.now();
    const member = await trx
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .select('users.id')
      .where('memberships.org_id', '=', orgId)
      .where('users.email', '=', email)
      .executeTakeFirst();
    if (member)
      throw new AppError('conflict', `${email} is a member already`, {
        details: [{ field: 'email', message: 'a member already' }],
      });
    const token = randomBytes(32).toString('base64url');
    const row: InvitationsTable = {
      id: newId('invitation'),
      org_id: orgId,
      email,
      role: input.role,
      token_hash: hashKey(token),
      created_by: user.id,
      created: iso(now),
      expires: iso(new Date(now.getTime() + deps.config.admin.invitationMs)),
      accepted: null,
      accepted_by: null,
      revoked: null,
    };
    await trx.insertInto('invitations').values(row).execute();
    await recordAudit(
      trx,
      {
        orgId,
        actor,
        action: 'invitation.created',
        target: { type: 'invitation', id: row.id },
        details: { email, role: input.role, expires: row.expires },
      },
      iso(now),
    );
    return toInvitationObject(row, now.getTime(), `${deps.config.publicUrl}/app/invite#token=${token}`);
  });
}

/** The organisation's invitations, newest first (owners and admins). */
export async function listInvitations(
  deps: Pick<Deps, 'db' | 'clock'>,
  user: Admin,
  orgId: string,
): Promise<InvitationObject[]> {
  await requireRole(deps.db, user, orgId, ['owner', 'admin'], 'see invitations');
  const rows = await deps.db
    .selectFrom('invitations')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created', 'desc')
    .orderBy('id', 'desc')
    .limit(1000)
    .execute();
  const now = deps.clock.now().getTime();
  return rows.map((r) => toInvitationObject(r, now));
}

/** Revokes a pending invitation (owners and admins): its link stops working. */
export async function revokeInvitation(
  deps: Pick<Deps, 'db' | 'clock'>,
  user: Admin,
  orgId: string,
  id: string,
  actor: Actor,
): Promise<void> {
  await requireRole(deps.db, user, orgId, ['owner', 'admin'], 'revoke invitations');
  await transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    const row = await trx
      .selectFrom('invitations')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw new AppError('not_found', `no invitation ${id} in organisation ${orgId}`);
    if (row.accepted) throw new AppError('invitation_used', `invitation ${id} was accepted already`);
    if (row.revoked) return;
    await trx.updateTable('invitations').set({ revoked: now }).where('id', '=', id).execute();
    await recordAudit(
      trx,
      {
        orgId,
        actor,
        action: 'invitation.revoked',
        target: { type: 'invitation', id },
        details: { email: row.email, role: row.role },
      },
      now,
    );
  });
}

export interface Acceptance {
  token: string;
  name?: string;
  password?: string;
}

/**
 * Accepts an invitation: with a session whose email is the invitation's, the membership is
 * added; without one, a new user is made (name and password required) with a new session. An
 * email that has an account must sign in first. Expired, used and revoked links are refused.
 */
export async function acceptInvitation(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  input: Acceptance,
  signedIn: UsersTable | null,
  meta: SessionMeta,
): Promise<{ user: UsersTable; orgId: string; session: StartedSession | null }> {
  return transact(deps.db, async (trx) => {
    const now = deps.clock.now();
    // The row lock: two acceptances of one link cannot both win.
    const row = await trx
      .updateTable('invitations')
      .set((eb) => ({ email: eb.ref('email') }))
      .where('token_hash', '=', hashKey(input.token))
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new AppError('not_found', 'this invitation link is not valid; ask for a new one');
    const state = status(row, now.getTime());
    if (state === 'accepted') throw new AppError('invitation_used', 'this invitation was accepted already; sign in');
    if (state === 'revoked') throw new AppError('invitation_revoked', 'this invitation was revoked; ask for a new one');
    if (state === 'expired') throw new AppError('invitation_expired', 'this invitation expired; ask for a new one');
    const org = await trx
      .selectFrom('orgs')
      .select('id')
      .where('id', '=', row.org_id)
      .where('deleted', 'is', null)
      .executeTakeFirst();
    if (!org) throw new AppError('invitation_revoked', 'the organisation of this invitation was deleted');

    let user: UsersTable;
    let session: StartedSession | null = null;
    if (signedIn) {
      if (signedIn.email !== row.email)
        throw new AppError(
          'conflict',
          `this invitation is for ${row.email}, and you are signed in as ${signedIn.email}; sign out, or sign in as ${row.email}`,
        );
      const member = await trx
        .selectFrom('memberships')
        .select('role')
        .where('org_id', '=', row.org_id)
        .where('user_id', '=', signedIn.id)
        .executeTakeFirst();
      if (member) throw new AppError('conflict', `you are a member of this organisation already (${member.role})`);
      user = signedIn;
    } else {
      const existing = await trx.selectFrom('users').select('id').where('email', '=', row.email).executeTakeFirst();
      if (existing)
        throw new AppError('conflict', `${row.email} has an account: sign in, then open the invitation link again`);
      const missing = (['name', 'password'] as const).filter((f) => !input[f]);
      if (missing.length > 0)
        throw new AppError('validation_failed', `a new account needs ${missing.join(' and ')}`, {
          details: missing.map((field) => ({ field, message: 'required for a new account' })),
        });
      user = await insertUser(trx, deps, { email: row.email, name: input.name!, password: input.password! }, iso(now));
      session = await startSession(trx, deps, user.id, meta);
    }
    const at = iso(now);
    await addMember(trx, user.id, row.org_id, row.role, at);
    await trx.updateTable('invitations').set({ accepted: at, accepted_by: user.id }).where('id', '=', row.id).execute();
    const actor = userActor(user.id, meta.ip);
    await recordAudit(
      trx,
      {
        orgId: row.org_id,
        actor,
        action: 'invitation.accepted',
        target: { type: 'invitation', id: row.id },
        details: { email: row.email, role: row.role, new_user: session !== null },
      },
      at,
    );
    await recordAudit(
      trx,
      {
        orgId: row.org_id,
        actor,
        action: 'member.added',
        target: { type: 'user', id: user.id },
        details: { email: row.email, role: row.role, invitation_id: row.id },
      },
      at,
    );
    return { user, orgId: row.org_id, session };
  });
}
