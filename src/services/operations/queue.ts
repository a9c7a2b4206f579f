import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import { AppError } from '../../errors.js';
import { aliveWorkers, workerStaleMs } from '../../queue/worker-registry.js';
import { toWorkerObject, type RunningTask, type WorkerObject } from '../../shapes/operations.js';
import { isTaskKind, TASK_KINDS, type TaskKind } from '../../shapes/task-kinds.js';
import { transact } from '../../db/transact.js';
import { recordAudit, type Actor } from '../audit.js';

// The queue of an organisation (GET /queue, pausing a kind) and the worker pools alive
// (GET /workers). The queue is one for the whole instance; an organisation sees and pauses its
// own projects' share of it, across all of them (its owners and admins run the organisation's
// work, not one project's).

const DAY_MS = 24 * 60 * 60 * 1000;

type OrgScope = { orgId: string };

export interface KindQueue {
  kind: TaskKind;
  /** Due now, waiting for a worker. */
  pending: number;
  /** Pending but not due yet: a retry waiting out its backoff. */
  delayed: number;
  processing: number;
  /** Workflows whose steps run. */
  waiting: number;
  /** Failed in the last 24 hours. */
  failed: number;
  paused: boolean;
  paused_at?: string;
  /** Seconds since the oldest pending task (due or delayed) was created; absent with none pending. */
  oldest_pending_seconds?: number;
}

export interface QueueCounts {
  pending: number;
  delayed: number;
  processing: number;
  waiting: number;
  failed: number;
  oldest_pending_seconds?: number;
}

/** Counts per kind (of an organisation's projects, or of the whole instance), from one grouped query. */
async function countByKind(deps: Deps, orgId: string | null): Promise<Map<string, QueueCounts & { oldest?: string }>> {
  const now = deps.clock.now();
  const nowIso = iso(now);
  const dayAgo = iso(new Date(now.getTime() - DAY_MS));
  let q = deps.db
    .selectFrom('tasks')
    .select((eb) => [
      'kind',
      'status',
      sql<number | string>`sum(case when run_after > ${nowIso} then 1 else 0 end)`.as('later'),
      eb.fn.countAll<number | string>().as('n'),
      eb.fn.min('created').as('oldest'),
    ])
    .where((w) =>
      w.or([
        w('status', 'in', ['pending', 'processing', 'waiting']),
        w.and([w('status', '=', sql.lit('failed')), w('finished', '>', dayAgo)]), // literals: see tasks.ts filterTasks
      ]),
    );
  if (orgId !== null)
    q = q.where('project_id', 'in', (eb) => eb.selectFrom('projects').select('id').where('org_id', '=', orgId));
  const rows = await q.groupBy(['kind', 'status']).execute();
  const out = new Map<string, QueueCounts & { oldest?: string }>();
  for (const r of rows) {
    const c = out.get(r.kind) ?? { pending: 0, delayed: 0, processing: 0, waiting: 0, failed: 0 };
    const n = Number(r.n);
    if (r.status === 'pending') {
      const later = Number(r.later);
      c.delayed += later;
      c.pending += n - later;
      if (r.oldest && (!c.oldest || r.oldest < c.oldest)) c.oldest = r.oldest;
    } else if (r.status === 'processing') c.processing += n;
    else if (r.status === 'waiting') c.waiting += n;
    else if (r.status === 'failed') c.failed += n;
    out.set(r.kind, c);
  }
  for (const c of out.values())
    if (c.oldest) c.oldest_pending_seconds = Math.max(0, Math.round((now.getTime() - Date.parse(c.oldest)) / 1000));
  return out;
}

/** The instance's queue in total (GET /system): every organisation's tasks, no per-organisation detail. */
export async function queueTotals(deps: Deps): Promise<QueueCounts> {
  const total: QueueCounts = { pending: 0, delayed: 0, processing: 0, waiting: 0, failed: 0 };
  for (const c of (await countByKind(deps, null)).values()) {
    total.pending += c.pending;
    total.delayed += c.delayed;
    total.processing += c.processing;
    total.waiting += c.waiting;
    total.failed += c.failed;
    if (c.oldest_pending_seconds !== undefined)
      total.oldest_pending_seconds = Math.max(total.oldest_pending_seconds ?? 0, c.oldest_pending_seconds);
  }
  return total;
}

/** GET /queue: every task kind with its counts over the organisation's projects and whether it is paused. */
export async function queueOverview(
  deps: Deps,
  scope: OrgScope,
): Promise<{ object: 'queue'; org_id: string; kinds: KindQueue[] }> {
  const [counts, pauses] = await Promise.all([
    countByKind(deps, scope.orgId),
    deps.db.selectFrom('queue_pauses').selectAll().where('org_id', '=', scope.orgId).execute(),
  ]);
  const paused = new Map(pauses.map((p) => [p.kind, p.paused]));
  const kinds = TASK_KINDS.map((kind): KindQueue => {
    const { oldest: _oldest, ...c } = counts.get(kind) ?? {
      pending: 0,
      delayed: 0,
      processing: 0,
      waiting: 0,
      failed: 0,
    };
    const at = paused.get(kind);
    return { kind, ...c, paused: at !== undefined, ...(at !== undefined ? { paused_at: at } : {}) };
  });
  return { object: 'queue', org_id: scope.orgId, kinds };
}

function checkKind(kind: string): TaskKind {
  if (!isTaskKind(kind))
    throw new AppError('validation_failed', `"${kind}" is not a task kind`, {
      details: [{ field: 'params.kind', message: `must be one of ${TASK_KINDS.join(', ')}` }],
    });
  return kind;
}

/** Workers stop claiming the kind for the organisation's projects; its tasks stay pending. Pausing twice is a no-op. */
export async function pauseKind(deps: Deps, scope: OrgScope, kind: string, actor: Actor): Promise<KindQueue> {
  const k = checkKind(kind);
  const now = iso(deps.clock.now());
  await transact(deps.db, async (trx) => {
    await trx
      .insertInto('queue_pauses')
      .values({ org_id: scope.orgId, kind: k, paused: now })
      .onConflict((oc) => oc.columns(['org_id', 'kind']).doNothing())
      .execute();
    await recordAudit(trx, { orgId: scope.orgId, actor, action: 'queue.kind_paused', details: { kind: k } }, now);
  });
  return kindQueue(deps, scope, k);
}

/** Workers claim the kind again (idle ones within their poll interval). Resuming a kind not paused is a no-op. */
export async function resumeKind(deps: Deps, scope: OrgScope, kind: string, actor: Actor): Promise<KindQueue> {
  const k = checkKind(kind);
  const now = iso(deps.clock.now());
  await transact(deps.db, async (trx) => {
    await trx.deleteFrom('queue_pauses').where('org_id', '=', scope.orgId).where('kind', '=', k).execute();
    await recordAudit(trx, { orgId: scope.orgId, actor, action: 'queue.kind_resumed', details: { kind: k } }, now);
  });
  return kindQueue(deps, scope, k);
}

async function kindQueue(deps: Deps, scope: OrgScope, kind: TaskKind): Promise<KindQueue> {
  const all = await queueOverview(deps, scope);
  return all.kinds.find((k) => k.kind === kind)!;
}

/** GET /workers: the pools that beat recently, each with the tasks it runs for this organisation. */
export async function listWorkers(deps: Deps, scope: OrgScope): Promise<WorkerObject[]> {
  const workers = await aliveWorkers(deps.db, deps.clock.now(), workerStaleMs(deps.config.workers.leaseMs));
  if (workers.length === 0) return [];
  const running = await deps.db
    .selectFrom('tasks')
    .select(['id', 'kind', 'project_id', 'lease_owner', 'started'])
    .where('status', '=', sql.lit('processing')) // a literal: see tasks.ts filterTasks
    .where(
      'lease_owner',
      'in',
      workers.map((w) => w.id),
    )
    .where('project_id', 'in', (eb) => eb.selectFrom('projects').select('id').where('org_id', '=', scope.orgId))
    .orderBy('started')
    .execute();
  const byWorker = new Map<string, RunningTask[]>();
  for (const t of running) {
    const list = byWorker.get(t.lease_owner ?? '') ?? [];
    list.push({ id: t.id, kind: t.kind, project_id: t.project_id });
    byWorker.set(t.lease_owner ?? '', list);
  }
  return workers.map((w) => toWorkerObject(w, byWorker.get(w.id) ?? []));
}
