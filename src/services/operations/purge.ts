import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import type { Database } from '../../db/schema.js';
import { transact } from '../../db/transact.js';
import { Poller } from '../../poller.js';
import { HOUSEKEEPING } from '../../signals.js';
import { pruneAudit } from '../audit.js';
import { pruneChains } from '../media/automation-runs.js';
import { dropProjectDerivatives } from '../media/image-url-cache.js';
import { completeDelete, intendDelete, rowBlobKeys } from '../media/blob-journal.js';

// Deleting an organisation or a project happens in two steps. The request marks it deleted in
// one transaction (projects.deleted, orgs.deleted; people/project-deletion.ts): from that commit
// on its keys and sessions find no project, it is in no list, its active tasks are cancelled and
// its undelivered events and webhooks dropped. A background pass (the housekeeper, every
// process's) then removes its rows in batches, its files through the blob journal (the rows'
// delete and the journal's 'delete' entries commit together, then the bytes go), and last the
// project and organisation rows. The mark is in the database, so a pass interrupted by a crash or
// a restart resumes where it stopped.

type Db = Kysely<Database>;

const POLL_MS = 10 * 60_000;
const FILE_BATCH = 200;

/**
 * The tables of a project's rows, children before parents (foreign keys). A table added later
 * with a project_id column belongs here too.
 */
const PROJECT_TABLES = [
  'tasks',
  'events',
  'automations',
  'webhook_endpoints',
  'idempotency_keys',
  'counters',
  'api_keys',
  'request_log_segments',
  'usage_counters',
  'chain_budgets',
  'chain_skips',
  'image_url_settings',
  'image_presets',
  'image_derivatives',
] as const;

/** Removes every row and blob of a deleted project, then the project. Safe to run again after an interruption. */
export async function purgeProject(deps: Deps, projectId: string): Promise<void> {
  const db = deps.db;
  await db
    .deleteFrom('webhook_attempts')
    .where('delivery_id', 'in', db.selectFrom('webhook_deliveries').select('id').where('project_id', '=', projectId))
    .execute();
  await db.deleteFrom('webhook_deliveries').where('project_id', '=', projectId).execute();
  await db
    .deleteFrom('automation_runs')
    .where('automation_id', 'in', db.selectFrom('automations').select('id').where('project_id', '=', projectId))
    .execute();
  // Files in batches: rows and their journal entries together, then the bytes.
  for (;;) {
    const keys = await transact(db, async (trx) => {
      const files = await trx
        .selectFrom('files')
        .select(['id', 'blob_key', 'type'])
        .where('project_id', '=', projectId)
        .limit(FILE_BATCH)
        .execute();
      if (files.length === 0) return [];
      await trx
        .deleteFrom('files')
        .where(
          'id',
          'in',
          files.map((f) => f.id),
        )
        .execute();
      await intendDelete(trx, files.flatMap(rowBlobKeys), iso(deps.clock.now()));
      return files.flatMap(rowBlobKeys);
    });
    if (keys.length === 0) break;
    await completeDelete(deps, keys);
  }
  await db.deleteFrom('media').where('project_id', '=', projectId).execute();
  await dropProjectDerivatives(deps, projectId); // image URLs' cached results (issue 24)
  for (const table of PROJECT_TABLES) await db.deleteFrom(table).where('project_id', '=', projectId).execute();
  await db.deleteFrom('projects').where('id', '=', projectId).where('deleted', 'is not', null).execute();
}

/** Removes a deleted organisation whose projects are gone: its invitations, queue pauses, memberships and row. */
async function purgeOrg(db: Db, orgId: string): Promise<void> {
  await transact(db, async (trx) => {
    const left = await trx.selectFrom('projects').select('id').where('org_id', '=', orgId).executeTakeFirst();
    if (left) return;
    await trx.deleteFrom('invitations').where('org_id', '=', orgId).execute();
    await trx.deleteFrom('queue_pauses').where('org_id', '=', orgId).execute();
    await trx.deleteFrom('memberships').where('org_id', '=', orgId).execute();
    await trx.deleteFrom('orgs').where('id', '=', orgId).where('deleted', 'is not', null).execute();
  });
}

/**
 * One pass: deleted projects (marked at least `graceMs` ago, so requests and tasks that started
 * before the mark have ended) and organisations are removed. Returns when the next one is due
 * (a project still in its grace), or null.
 */
export async function purgeDeleted(deps: Deps, graceMs: number): Promise<number | null> {
  const now = deps.clock.now().getTime();
  const projects = await deps.db
    .selectFrom('projects')
    .select(['id', 'deleted'])
    .where('deleted', 'is not', null)
    .execute();
  let next: number | null = null;
  for (const p of projects) {
    const due = Date.parse(p.deleted!) + graceMs;
    if (due > now) {
      next = Math.min(next ?? due, due);
      continue;
    }
    await purgeProject(deps, p.id);
    deps.log.info({ project_id: p.id }, 'deleted project purged');
  }
  const orgs = await deps.db.selectFrom('orgs').select('id').where('deleted', 'is not', null).execute();
  for (const o of orgs) await purgeOrg(deps.db, o.id);
  return next;
}

/**
 * The housekeeping loop of every serve and worker process (the shape of poller.ts): the purge
 * of deleted projects and organisations, the audit log's retention (MEDIAD_AUDIT_DAYS) and old
 * automation chain budgets.
 * A deletion wakes it; a project still in its grace wakes it again when the grace ends.
 */
export class Housekeeper {
  private readonly poller: Poller;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly deps: Deps,
    private readonly graceMs: number,
  ) {
    this.poller = new Poller({
      signal: HOUSEKEEPING,
      pollMs: POLL_MS,
      pass: (fromTimer) => this.pass(fromTimer),
      onError: (err) => deps.log.error({ err }, 'housekeeping failed'),
    });
  }

  start(): void {
    this.poller.start();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    await this.poller.stop();
  }

  private async pass(fromTimer: boolean): Promise<void> {
    if (fromTimer) {
      const pruned = await pruneAudit(this.deps);
      if (pruned > 0) this.deps.log.info({ pruned }, 'audit records past their retention removed');
      const chains = await pruneChains(this.deps);
      if (chains > 0) this.deps.log.info({ rows: chains }, 'automation chain budgets of a week ago removed');
    }
    const next = await purgeDeleted(this.deps, this.graceMs);
    clearTimeout(this.timer);
    if (next !== null && !this.poller.isStopped) {
      this.timer = setTimeout(() => this.poller.wake(), Math.max(0, next - this.deps.clock.now().getTime()) + 50);
      this.timer.unref();
    }
  }
}
