import type { Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import { iso } from '../deps.js';
import type { AuditLogTable, Database } from '../db/schema.js';
import { listPage, mapPage, type Page, type PageRequest } from '../db/paginate.js';
import { newId } from '../ids.js';
import { toAuditObject, type AuditObject } from '../shapes/audit.js';
import type { AuthContext } from './access.js';

// The audit log: who changed what in an organisation, written in the same transaction as the
// change (a change that fails or is refused leaves no record), kept MEDIAD_AUDIT_DAYS.

type Db = Kysely<Database>;

/** The actions recorded; the closed list the API documents and filters by. */
export const AUDIT_ACTIONS = [
  'auth.setup',
  'auth.sign_in',
  'auth.sign_in_failed',
  'auth.sign_out',
  'account.password_changed',
  'key.created',
  'key.renamed',
  'key.paused',
  'key.resumed',
  'key.revoked',
  'member.added',
  'member.role_changed',
  'member.removed',
  'invitation.created',
  'invitation.accepted',
  'invitation.revoked',
  'org.created',
  'org.renamed',
  'org.deleted',
  'project.created',
  'project.renamed',
  'project.deleted',
  'project.settings_changed',
  'project.webhook_secret_rotated',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'queue.kind_paused',
  'queue.kind_resumed',
  'user.created',
  // Image URLs (issue 24)
  'project.image_url_key_revealed',
  'project.image_url_key_rotated',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who did it, and from which address. */
export interface Actor {
  type: AuditLogTable['actor_type'];
  id: string | null;
  ip: string | null;
}

/** Where a change happens and who makes it: what a service needs to record it. */
export interface AuditScope {
  orgId: string;
  projectId: string | null;
  actor: Actor;
}

/** The actor of an authenticated request (an API key or a signed-in user). */
export function actorOf(auth: AuthContext, ip: string | undefined): Actor {
  const p = auth.principal;
  return p.type === 'key'
    ? { type: 'key', id: p.keyId, ip: ip ?? null }
    : p.type === 'session'
      ? { type: 'user', id: p.userId, ip: ip ?? null }
      : { type: 'anonymous', id: null, ip: ip ?? null };
}

/** The audit scope of a request acting on its project. */
export function projectAudit(auth: AuthContext, ip: string | undefined): AuditScope {
  return { orgId: auth.orgId, projectId: auth.projectId, actor: actorOf(auth, ip) };
}

export const userActor = (userId: string, ip: string | undefined): Actor => ({
  type: 'user',
  id: userId,
  ip: ip ?? null,
});

// Never secrets in details: any field whose name says it holds one is dropped, however deep.
const SECRET_FIELD = /pass(word)?|secret|token|hash|^key$|cookie|authorization/i;

function scrub(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(scrub);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k, v]) => !SECRET_FIELD.test(k) && v !== undefined)
        .map(([k, v]) => [k, scrub(v)]),
    );
  return value;
}

export interface AuditEntry {
  /** The organisation it belongs to; null only for what belongs to none (a failed sign-in with an unknown email). */
  orgId: string | null;
  projectId?: string | null;
  actor: Actor;
  action: AuditAction;
  target?: { type: string; id: string } | null;
  details?: Record<string, unknown>;
}

/** Writes a record in `trx`, the transaction of the change it records. */
export async function recordAudit(trx: Db, entry: AuditEntry, now: string): Promise<void> {
  await trx
    .insertInto('audit_log')
    .values({
      id: newId('audit'),
      org_id: entry.orgId,
      project_id: entry.projectId ?? null,
      actor_type: entry.actor.type,
      actor_id: entry.actor.id,
      action: entry.action,
      target_type: entry.target?.type ?? null,
      target_id: entry.target?.id ?? null,
      details: JSON.stringify(scrub(entry.details ?? {})),
      ip: entry.actor.ip?.slice(0, 64) ?? null,
      created: now,
    })
    .execute();
}

/**
 * A record about a person rather than an organisation (sign-in, sign-out, password change): one
 * per organisation they belong to, so each organisation's owners see it (one without an
 * organisation when they belong to none).
 */
export async function recordUserAudit(
  trx: Db,
  userId: string,
  entry: Omit<AuditEntry, 'orgId' | 'projectId'>,
  now: string,
): Promise<void> {
  const orgs = await trx
    .selectFrom('memberships')
    .innerJoin('orgs', 'orgs.id', 'memberships.org_id')
    .select('orgs.id')
    .where('memberships.user_id', '=', userId)
    .where('orgs.deleted', 'is', null)
    .execute();
  const ids = orgs.length > 0 ? orgs.map((o) => o.id) : [null];
  for (const orgId of ids) await recordAudit(trx, { ...entry, orgId }, now);
}

export interface AuditFilter {
  action?: string;
  /** A user or key id. */
  actor?: string;
  created_after?: string;
  created_before?: string;
}

/** An organisation's records, newest first (null: every record, the instance administrators' view). */
export async function listAudit(
  deps: Pick<Deps, 'db'>,
  orgId: string | null,
  filter: AuditFilter,
  request: PageRequest,
): Promise<Page<AuditObject>> {
  let q = deps.db.selectFrom('audit_log');
  if (orgId !== null) q = q.where('org_id', '=', orgId);
  if (filter.action) q = q.where('action', '=', filter.action);
  if (filter.actor) q = q.where('actor_id', '=', filter.actor);
  if (filter.created_after) q = q.where('created', '>=', iso(new Date(filter.created_after)));
  if (filter.created_before) q = q.where('created', '<', iso(new Date(filter.created_before)));
  const page = await listPage(q, (s) => s.selectAll().orderBy('created', 'desc').orderBy('id', 'desc'), request);
  return mapPage(page, toAuditObject);
}

/** Removes the records older than the retention; returns how many went. */
export async function pruneAudit(deps: Pick<Deps, 'db' | 'clock' | 'config'>): Promise<number> {
  const before = iso(new Date(deps.clock.now().getTime() - deps.config.admin.auditDays * 86_400_000));
  const res = await deps.db.deleteFrom('audit_log').where('created', '<', before).executeTakeFirst();
  return Number(res.numDeletedRows);
}
