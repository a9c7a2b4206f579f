import { SqliteAdapter, type Kysely } from 'kysely';
import type { Database, TasksTable } from '../db/schema.js';
import { notify } from '../db/notify.js';

// Claiming is one UPDATE … WHERE id = (oldest due pending task) RETURNING *. SQLite runs
// it under its single writer lock; PostgreSQL adds FOR UPDATE SKIP LOCKED so concurrent
// workers take different rows instead of queueing behind one another.

export async function claimTask(db: Kysely<Database>, owner: string, leaseMs: number, now: Date, kinds?: readonly string[]): Promise<TasksTable | undefined> {
  const iso = now.toISOString();
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
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
