import { SqliteAdapter, sql, type Kysely } from 'kysely';
import type { Database, TasksTable } from '../db/schema.js';
import { notify } from '../db/notify.js';

// Claiming is one UPDATE … WHERE id = (a due pending task) RETURNING *. SQLite runs it under
// its single writer lock; PostgreSQL adds FOR UPDATE SKIP LOCKED so concurrent workers take
// different rows instead of queueing behind one another.
//
// Claims are fair across projects: the task comes from the project with due work that has the
// fewest tasks running (ties: the one waiting longest), then that project's oldest due task. So a
// project that queued a thousand tasks shares the workers with one that queued one, instead of
// making it wait behind its backlog.

export async function claimTask(db: Kysely<Database>, owner: string, leaseMs: number, now: Date, kinds?: readonly string[]): Promise<TasksTable | undefined> {
  // On PostgreSQL the fair project's due tasks may all be locked by other claims in flight:
  // then any due task is taken rather than none.
  return (await claimOne(db, owner, leaseMs, now, kinds, true)) ?? (await claimOne(db, owner, leaseMs, now, kinds, false));
}

async function claimOne(db: Kysely<Database>, owner: string, leaseMs: number, now: Date, kinds: readonly string[] | undefined, fair: boolean) {
  const iso = now.toISOString();
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  const due = sql<boolean>`status = 'pending' and run_after <= ${iso}${kinds ? sql` and kind in (${sql.join(kinds)})` : sql``}`;
  return db.updateTable('tasks')
    .set((eb) => ({
      status: 'processing',
      lease_owner: owner,
      lease_expires: new Date(now.getTime() + leaseMs).toISOString(),
      attempts: eb('attempts', '+', 1),
      started: eb.fn.coalesce('started', eb.val(iso)),
      updated: iso,
    }))
    .where('id', '=', (eb) => {
      let q = eb.selectFrom('tasks').select('id').where('status', '=', 'pending').where('run_after', '<=', iso);
      if (kinds) q = q.where('kind', 'in', kinds);
      if (fair) {
        q = q.where('project_id', '=', (p) => p.selectFrom('tasks').select('project_id')
          .where('status', 'in', ['pending', 'processing'])
          .groupBy('project_id')
          .having(sql`sum(case when ${due} then 1 else 0 end)`, '>', 0)
          .orderBy(sql`sum(case when status = 'processing' then 1 else 0 end)`)
          .orderBy(sql`min(case when ${due} then run_after end)`)
          .limit(1));
      }
      q = q.orderBy('run_after').orderBy('created').limit(1);
      return sqlite ? q : q.forUpdate().skipLocked();
    })
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}

/** Extends the lease and stores progress; false when the task is no longer ours (lease lost or cancelled). */
export async function heartbeat(db: Kysely<Database>, id: string, owner: string, leaseMs: number, now: Date, progress?: number): Promise<boolean> {
  const res = await db.updateTable('tasks')
    .set({ lease_expires: new Date(now.getTime() + leaseMs).toISOString(), updated: now.toISOString(), ...(progress === undefined ? {} : { progress }) })
    .where('id', '=', id).where('lease_owner', '=', owner).where('status', '=', 'processing')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Tasks whose worker stopped heartbeating (killed, crashed, partitioned). */
export async function expiredLeases(db: Kysely<Database>, now: Date, limit = 50): Promise<TasksTable[]> {
  return db.selectFrom('tasks').selectAll()
    .where('status', '=', 'processing').where('lease_expires', '<', now.toISOString())
    .limit(limit).execute();
}

/** Puts a task back for another attempt, only if it is still the expired/owned row we saw. */
export async function releaseTask(db: Kysely<Database>, task: Pick<TasksTable, 'id' | 'lease_owner'>, runAfter: Date, now: Date, error?: string): Promise<boolean> {
  const res = await db.updateTable('tasks')
    .set({ status: 'pending', lease_owner: null, lease_expires: null, run_after: runAfter.toISOString(), updated: now.toISOString(), ...(error ? { error } : {}) })
    .where('id', '=', task.id).where('status', '=', 'processing')
    .where('lease_owner', task.lease_owner === null ? 'is' : '=', task.lease_owner)
    .executeTakeFirst();
  const released = Number(res.numUpdatedRows) > 0;
  // Due now (a shutdown or an expired lease): wake idle workers elsewhere.
  if (released && runAfter <= now) await notify(db, 'mediad_tasks');
  return released;
}
