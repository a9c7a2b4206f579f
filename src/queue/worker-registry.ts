import type { Kysely } from 'kysely';
import type { Database, WorkersTable } from '../db/schema.js';

// The worker pools alive, as rows kept by their own heartbeats: a pool writes its row when it
// starts, beats it while it runs and deletes it when it stops. A process that died stops
// beating; its row is left out of the list once stale and deleted by the next pool that beats.
// The tasks a pool runs carry its id as their lease_owner.

/** How often a pool writes its heartbeat. */
export function workerBeatMs(leaseMs: number): number {
  return Math.max(1000, Math.min(10_000, Math.floor(leaseMs / 3)));
}

/** After this long without a heartbeat a pool counts as gone: three missed beats, and at least a lease. */
export function workerStaleMs(leaseMs: number): number {
  return Math.max(leaseMs, 3 * workerBeatMs(leaseMs));
}

export async function registerWorker(db: Kysely<Database>, row: WorkersTable): Promise<void> {
  await db
    .insertInto('workers')
    .values(row)
    .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat: row.heartbeat, concurrency: row.concurrency }))
    .execute();
}

/** Beats this pool's row (written again if something removed it) and deletes rows gone stale. */
export async function beatWorker(db: Kysely<Database>, row: WorkersTable, now: Date, staleMs: number): Promise<void> {
  await registerWorker(db, { ...row, heartbeat: now.toISOString() });
  await db
    .deleteFrom('workers')
    .where('heartbeat', '<', new Date(now.getTime() - staleMs).toISOString())
    .execute();
}

export async function removeWorker(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('workers').where('id', '=', id).execute();
}

/** The pools that beat within `staleMs`, oldest first. */
export async function aliveWorkers(db: Kysely<Database>, now: Date, staleMs: number): Promise<WorkersTable[]> {
  return db
    .selectFrom('workers')
    .selectAll()
    .where('heartbeat', '>=', new Date(now.getTime() - staleMs).toISOString())
    .orderBy('started')
    .orderBy('id')
    .execute();
}
