import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import type { Database, Role } from '../../db/schema.js';
import { transact } from '../../db/transact.js';
import { isUniqueViolation } from '../../db/errors.js';
import { AppError } from '../../errors.js';
import { newId, randomBase62 } from '../../ids.js';
import { toProjectObject } from '../../shapes/projects.js';
import { DEFAULT_VERSION, type ApiVersion } from '../../versions.js';
import { newWebhookSecret } from '../../webhooks/secrets.js';
import { recordAudit, type Actor } from '../audit.js';

// Organisations and their projects, and who belongs to them (a role per organisation).

type Db = Kysely<Database>;

/**
 * A name already in use (the unique constraints on organisation and project names decide, also
 * between two requests at once; a deleted one's name was freed when it was marked): a 409.
 */
export function conflictOnName(what: string, name: string) {
  return (err: unknown): never => {
    if (!isUniqueViolation(err)) throw err;
    throw new AppError('conflict', `${what} named "${name}" exists already`, {
      details: [{ field: 'name', message: 'taken' }],
    });
  };
}

export async function insertOrg(trx: Db, name: string, now: string): Promise<{ id: string; name: string }> {
  const org = { id: newId('org'), name, created: now };
  await trx.insertInto('orgs').values(org).execute();
  return org;
}

export async function insertProject(
  trx: Db,
  orgId: string,
  name: string,
  now: string,
  apiVersion: ApiVersion = DEFAULT_VERSION,
): Promise<{ id: string; name: string }> {
  const project = { id: newId('project'), name };
  await trx
    .insertInto('projects')
    .values({
      id: project.id,
      org_id: orgId,
      name,
      signing_secret: randomBase62(43),
      webhook_secret: newWebhookSecret(),
      webhook_secret_previous: null,
      webhook_secret_rotated: null,
      require_signed_delivery: 0,
      api_version: apiVersion,
      created: now,
    })
    .execute();
  return project;
}

/** The org and project of these names, made when missing (the CLI's keys create). */
export async function ensureProject(
  trx: Db,
  orgName: string,
  projectName: string,
  now: string,
  apiVersion?: ApiVersion,
) {
  const org =
    (await trx
      .selectFrom('orgs')
      .select(['id', 'name'])
      .where('name', '=', orgName)
      .where('deleted', 'is', null)
      .executeTakeFirst()) ?? (await insertOrg(trx, orgName, now));
  const project =
    (await trx
      .selectFrom('projects')
      .select(['id', 'name'])
      .where('org_id', '=', org.id)
      .where('name', '=', projectName)
      .where('deleted', 'is', null)
      .executeTakeFirst()) ?? (await insertProject(trx, org.id, projectName, now, apiVersion));
  return { org, project };
}

export async function addMember(trx: Db, userId: string, orgId: string, role: Role, now: string): Promise<void> {
  await trx
    .insertInto('memberships')
    .values({ user_id: userId, org_id: orgId, role, created: now })
    .onConflict((oc) => oc.columns(['user_id', 'org_id']).doUpdateSet({ role }))
    .execute();
}

/** A user's role in the organisation that owns a project; undefined when they are not a member (the project is then not theirs to see). */
export async function roleInProject(
  db: Db,
  userId: string,
  projectId: string,
): Promise<{ role: Role; orgId: string } | undefined> {
  const row = await db
    .selectFrom('projects')
    .innerJoin('memberships', 'memberships.org_id', 'projects.org_id')
    .select(['memberships.role', 'projects.org_id'])
    .where('projects.id', '=', projectId)
    .where('memberships.user_id', '=', userId)
    .where('projects.deleted', 'is', null)
    .executeTakeFirst();
  return row ? { role: row.role, orgId: row.org_id } : undefined;
}

/** The user's organisations, each with their role in it, oldest first. */
export async function listOrgs(deps: Pick<Deps, 'db'>, userId: string) {
  const rows = await deps.db
    .selectFrom('memberships')
    .innerJoin('orgs', 'orgs.id', 'memberships.org_id')
    .select(['orgs.id', 'orgs.name', 'orgs.created', 'memberships.role'])
    .where('memberships.user_id', '=', userId)
    .where('orgs.deleted', 'is', null)
    .orderBy('orgs.created')
    .orderBy('orgs.id')
    .execute();
  return rows.map((o) => ({ id: o.id, object: 'org' as const, name: o.name, role: o.role, created: o.created }));
}

/** The user's organisations with their role and projects (what the app's project switcher shows). */
export async function memberships(deps: Pick<Deps, 'db'>, userId: string) {
  const orgs = await listOrgs(deps, userId);
  const projects =
    orgs.length === 0
      ? []
      : await deps.db
          .selectFrom('projects')
          .select(['id', 'name', 'org_id'])
          .where(
            'org_id',
            'in',
            orgs.map((o) => o.id),
          )
          .where('deleted', 'is', null)
          .orderBy('created')
          .orderBy('id')
          .execute();
  return orgs.map((o) => ({
    org: { id: o.id, name: o.name },
    role: o.role,
    projects: projects.filter((p) => p.org_id === o.id).map((p) => ({ id: p.id, name: p.name })),
  }));
}

async function orgRole(deps: Pick<Deps, 'db'>, userId: string, orgId: string): Promise<Role> {
  const m = await deps.db
    .selectFrom('memberships')
    .innerJoin('orgs', 'orgs.id', 'memberships.org_id')
    .select('memberships.role')
    .where('memberships.user_id', '=', userId)
    .where('memberships.org_id', '=', orgId)
    .where('orgs.deleted', 'is', null)
    .executeTakeFirst();
  if (!m) throw new AppError('not_found', `no organisation ${orgId} of yours`);
  return m.role;
}

export async function listOrgProjects(deps: Pick<Deps, 'db'>, userId: string, orgId: string) {
  await orgRole(deps, userId, orgId);
  const rows = await deps.db
    .selectFrom('projects')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('deleted', 'is', null)
    .orderBy('created')
    .execute();
  return rows.map(toProjectObject);
}

/** A new project of the organisation (owners and admins). */
export async function createOrgProject(
  deps: Pick<Deps, 'db' | 'clock'>,
  userId: string,
  orgId: string,
  name: string,
  actor: Actor,
) {
  const role = await orgRole(deps, userId, orgId);
  if (role !== 'owner' && role !== 'admin')
    throw new AppError('insufficient_role', `your role (${role}) may not create projects; ask an owner or admin`);
  return transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    const p = await insertProject(trx, orgId, name, now);
    await recordAudit(
      trx,
      {
        orgId,
        projectId: p.id,
        actor,
        action: 'project.created',
        target: { type: 'project', id: p.id },
        details: { name },
      },
      now,
    );
    return toProjectObject(
      await trx.selectFrom('projects').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow(),
    );
  }).catch(conflictOnName('a project of this organisation', name));
}
