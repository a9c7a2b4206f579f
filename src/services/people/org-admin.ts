import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import type { Database, Role, UsersTable } from '../../db/schema.js';
import { transact } from '../../db/transact.js';
import { AppError } from '../../errors.js';
import { toProjectObject } from '../../shapes/projects.js';
import { recordAudit, type Actor } from '../audit.js';
import { addMember, conflictOnName, insertOrg } from './orgs.js';
import { afterDeletion, markProjectDeleted } from './project-deletion.js';

// Administration of organisations and their projects and members: owners and admins of the
// organisation, and instance administrators (users.is_admin), who act as owners everywhere.

type Db = Kysely<Database>;
export type Admin = Pick<UsersTable, 'id' | 'is_admin'>;

/**
 * The role the user acts with in the organisation: their membership's, or owner for an instance
 * administrator. Another organisation (or a deleted one) is a 404, as for every resource.
 */
export async function actingRole(db: Db, user: Admin, orgId: string): Promise<Role> {
  const org = await db
    .selectFrom('orgs')
    .leftJoin('memberships', (j) =>
      j.onRef('memberships.org_id', '=', 'orgs.id').on('memberships.user_id', '=', user.id),
    )
    .select(['orgs.id', 'memberships.role'])
    .where('orgs.id', '=', orgId)
    .where('orgs.deleted', 'is', null)
    .executeTakeFirst();
  if (org && user.is_admin === 1) return 'owner';
  if (!org?.role) throw new AppError('not_found', `no organisation ${orgId} of yours`);
  return org.role;
}

const refuse = (role: Role, what: string) =>
  new AppError(
    'insufficient_role',
    `your role (${role}) may not ${what}; ask an owner${what.includes('owner') ? '' : ' or admin'}`,
  );

/** Throws 403 unless the role is one of `allowed`. */
export async function requireRole(db: Db, user: Admin, orgId: string, allowed: Role[], what: string): Promise<Role> {
  const role = await actingRole(db, user, orgId);
  if (!allowed.includes(role)) throw refuse(role, what);
  return role;
}

/** Takes the organisation's row lock first, so concurrent changes of its members and owners run one after another. */
async function lockOrg(trx: Db, orgId: string): Promise<{ id: string; name: string }> {
  const org = await trx
    .updateTable('orgs')
    .set((eb) => ({ name: eb.ref('name') }))
    .where('id', '=', orgId)
    .where('deleted', 'is', null)
    .returning(['id', 'name'])
    .executeTakeFirst();
  if (!org) throw new AppError('not_found', `no organisation ${orgId} of yours`);
  return org;
}

function checkConfirm(confirm: string | undefined, name: string, what: string): void {
  if (confirm !== name)
    throw new AppError(
      'confirmation_required',
      `to delete the ${what} "${name}", send {"confirm": "${name}"}: its exact name`,
      { details: [{ field: 'confirm', message: 'must be the exact name' }] },
    );
}

export function orgObject(org: { id: string; name: string; created: string }, role: Role) {
  return { id: org.id, object: 'org' as const, name: org.name, role, created: org.created };
}

/** A new organisation (instance administrators); its creator becomes its owner. */
export async function createOrg(deps: Pick<Deps, 'db' | 'clock'>, user: Admin, name: string, actor: Actor) {
  if (user.is_admin !== 1) throw new AppError('insufficient_role', 'only instance administrators create organisations');
  return transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    const org = await insertOrg(trx, name, now);
    await addMember(trx, user.id, org.id, 'owner', now);
    await recordAudit(
      trx,
      { orgId: org.id, actor, action: 'org.created', target: { type: 'org', id: org.id }, details: { name } },
      now,
    );
    return orgObject({ ...org, created: now }, 'owner');
  }).catch(conflictOnName('an organisation', name));
}

export async function renameOrg(
  deps: Pick<Deps, 'db' | 'clock'>,
  user: Admin,
  orgId: string,
  name: string,
  actor: Actor,
) {
  const role = await requireRole(deps.db, user, orgId, ['owner'], 'rename the organisation');
  return transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    const before = await lockOrg(trx, orgId);
    const org = await trx
      .updateTable('orgs')
      .set({ name })
      .where('id', '=', orgId)
      .returning(['id', 'name', 'created'])
      .executeTakeFirstOrThrow();
    if (before.name !== name)
      await recordAudit(
        trx,
        {
          orgId,
          actor,
          action: 'org.renamed',
          target: { type: 'org', id: orgId },
          details: { from: before.name, to: name },
        },
        now,
      );
    return orgObject(org, role);
  }).catch(conflictOnName('an organisation', name));
}

/**
 * Deletes an organisation (owners), with its exact name typed as confirmation: it and its
 * projects are marked deleted at once (their keys stop working, they leave every list) and the
 * purge removes their rows and blobs. Its name is free again at once.
 */
export async function deleteOrg(
  deps: Pick<Deps, 'db' | 'clock'>,
  user: Admin,
  orgId: string,
  confirm: string | undefined,
  actor: Actor,
): Promise<void> {
  await requireRole(deps.db, user, orgId, ['owner'], 'delete the organisation');
  const projectIds = await transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    const org = await lockOrg(trx, orgId);
    checkConfirm(confirm, org.name, 'organisation');
    await trx
      .updateTable('orgs')
      .set({ deleted: now, name: `${org.id} (deleted)` })
      .where('id', '=', orgId)
      .execute();
    const projects = await trx
      .selectFrom('projects')
      .select(['id', 'name'])
      .where('org_id', '=', orgId)
      .where('deleted', 'is', null)
      .execute();
    for (const p of projects) await markProjectDeleted(trx, p.id, now);
    await recordAudit(
      trx,
      {
        orgId,
        actor,
        action: 'org.deleted',
        target: { type: 'org', id: orgId },
        details: { name: org.name, projects: projects.map((p) => p.id) },
      },
      now,
    );
    return projects.map((p) => p.id);
  });
  afterDeletion(projectIds);
}

async function findProject(trx: Db, orgId: string, projectId: string) {
  const row = await trx
    .selectFrom('projects')
    .selectAll()
    .where('id', '=', projectId)
    .where('org_id', '=', orgId)
    .where('deleted', 'is', null)
    .executeTakeFirst();
  if (!row) throw new AppError('not_found', `no project ${projectId} in organisation ${orgId}`);
  return row;
}

export async function renameProject(
  deps: Pick<Deps, 'db' | 'clock'>,
  user: Admin,
  orgId: string,
  projectId: string,
  name: string,
  actor: Actor,
) {
  await requireRole(deps.db, user, orgId, ['owner', 'admin'], 'rename projects');
  return transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    await lockOrg(trx, orgId);
    const row = await findProject(trx, orgId, projectId);
    await trx.updateTable('projects').set({ name }).where('id', '=', projectId).execute();
    if (row.name !== name)
      await recordAudit(
        trx,
        {
          orgId,
          projectId,
          actor,
          action: 'project.renamed',
          target: { type: 'project', id: projectId },
          details: { from: row.name, to: name },
        },
        now,
      );
    return toProjectObject({ ...row, name });
  }).catch(conflictOnName('a project of this organisation', name));
}

/** Deletes a project (owners and admins) with its exact name typed as confirmation; see deleteOrg. */
export async function deleteProject(
  deps: Pick<Deps, 'db' | 'clock'>,
  user: Admin,
  orgId: string,
  projectId: string,
  confirm: string | undefined,
  actor: Actor,
): Promise<void> {
  await requireRole(deps.db, user, orgId, ['owner', 'admin'], 'delete projects');
  await transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    await lockOrg(trx, orgId);
    const row = await findProject(trx, orgId, projectId);
    checkConfirm(confirm, row.name, 'project');
    await markProjectDeleted(trx, projectId, now);
    await recordAudit(
      trx,
      {
        orgId,
        projectId,
        actor,
        action: 'project.deleted',
        target: { type: 'project', id: projectId },
        details: { name: row.name },
      },
      now,
    );
  });
  afterDeletion([projectId]);
}

// Members.

function memberObject(m: { user_id: string; email: string; name: string; role: Role; created: string }) {
  return {
    object: 'member' as const,
    user_id: m.user_id,
    email: m.email,
    name: m.name,
    role: m.role,
    created: m.created,
  };
}
export type MemberObject = ReturnType<typeof memberObject>;

function membersQuery(db: Db, orgId: string) {
  return db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['memberships.user_id', 'users.email', 'users.name', 'memberships.role', 'memberships.created'])
    .where('memberships.org_id', '=', orgId);
}

/** The organisation's members, oldest first (any member may see who else is). */
export async function listMembers(deps: Pick<Deps, 'db'>, user: Admin, orgId: string): Promise<MemberObject[]> {
  await actingRole(deps.db, user, orgId);
  const rows = await membersQuery(deps.db, orgId).orderBy('memberships.created').orderBy('users.email').execute();
  return rows.map(memberObject);
}

async function findMember(trx: Db, orgId: string, userId: string) {
  const m = await membersQuery(trx, orgId).where('memberships.user_id', '=', userId).executeTakeFirst();
  if (!m) throw new AppError('not_found', `no member ${userId} in organisation ${orgId}`);
  return m;
}

async function otherOwners(trx: Db, orgId: string, userId: string): Promise<number> {
  const r = await trx
    .selectFrom('memberships')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .where('role', '=', 'owner')
    .where('user_id', '!=', userId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

const lastOwner = (what: string) =>
  new AppError('last_owner', `${what}: the organisation would have no owner left; make another member owner first`);

/** Owners change any role; admins change admins, members and viewers (never to or from owner); the last owner stays. */
export async function changeMemberRole(
  deps: Pick<Deps, 'db' | 'clock'>,
  user: Admin,
  orgId: string,
  userId: string,
  role: Role,
  actor: Actor,
): Promise<MemberObject> {
  const acting = await requireRole(deps.db, user, orgId, ['owner', 'admin'], 'change roles');
  return transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    await lockOrg(trx, orgId);
    const m = await findMember(trx, orgId, userId);
    if ((m.role === 'owner' || role === 'owner') && acting !== 'owner') throw refuse(acting, 'make or unmake owners');
    if (m.role === role) return memberObject(m);
    if (m.role === 'owner' && (await otherOwners(trx, orgId, userId)) === 0)
      throw lastOwner(`${m.email} is the only owner`);
    await trx
      .updateTable('memberships')
      .set({ role })
      .where('org_id', '=', orgId)
      .where('user_id', '=', userId)
      .execute();
    await recordAudit(
      trx,
      {
        orgId,
        actor,
        action: 'member.role_changed',
        target: { type: 'user', id: userId },
        details: { email: m.email, from: m.role, to: role },
      },
      now,
    );
    return memberObject({ ...m, role });
  });
}

/** Owners remove anyone, admins anyone but owners, and everyone may leave; the last owner stays. */
export async function removeMember(
  deps: Pick<Deps, 'db' | 'clock'>,
  user: Admin,
  orgId: string,
  userId: string,
  actor: Actor,
): Promise<void> {
  const acting = await actingRole(deps.db, user, orgId);
  const self = userId === user.id;
  if (!self && acting !== 'owner' && acting !== 'admin') throw refuse(acting, 'remove members');
  await transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    await lockOrg(trx, orgId);
    const m = await findMember(trx, orgId, userId);
    if (m.role === 'owner' && !self && acting !== 'owner') throw refuse(acting, 'remove owners');
    if (m.role === 'owner' && (await otherOwners(trx, orgId, userId)) === 0)
      throw lastOwner(`${m.email} is the only owner`);
    await trx.deleteFrom('memberships').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
    await recordAudit(
      trx,
      {
        orgId,
        actor,
        action: 'member.removed',
        target: { type: 'user', id: userId },
        details: { email: m.email, role: m.role },
      },
      now,
    );
  });
}
