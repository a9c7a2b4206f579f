import { sql, type Kysely } from 'kysely';
import type { Database, UsageCountersTable } from '../schema.js';
import { heldWrite, valuesOf } from '../transact.js';

// The usage counters: a value per project, metric and UTC hour and day, added to where the
// thing counted happens (a task's end, in its transaction) or in batches (bytes delivered).

export type TaskEnd = 'completed' | 'failed' | 'cancelled';

export const USAGE_METRICS = {
  bytesDelivered: 'bytes_delivered',
  /** Run time of the tasks of a kind that ended, in milliseconds. */
  taskMs: (kind: string) => `task_ms:${kind}`,
  tasks: (status: TaskEnd) => `tasks:${status}`,
} as const;

export interface UsageDelta {
  projectId: string;
  /** When it happened (ISO): picks its hour and day. */
  at: string;
  metric: string;
  delta: number;
}

/** Hourly rows are kept this long (the 24 h chart needs one day); daily rows are kept. */
export const HOURLY_KEEP_MS = 3 * 24 * 3600_000;

function upsert(db: Kysely<Database>, rows: UsageCountersTable[]) {
  return db
    .insertInto('usage_counters')
    .values(rows)
    .onConflict((oc) =>
      oc
        .columns(['project_id', 'period', 'bucket', 'metric'])
        .doUpdateSet({ value: sql<number>`usage_counters.value + excluded.value` }),
    );
}

const heldUsage = heldWrite('usage_counters', { args: valuesOf<UsageCountersTable>, build: upsert });

/**
 * Adds each delta to its hour's and its day's row, in one statement (in a transact transaction,
 * added up with the transaction's other deltas and written at its end: db/transact.ts).
 */
export async function addUsage(db: Kysely<Database>, deltas: UsageDelta[]): Promise<void> {
  if (deltas.length === 0) return;
  const held = heldUsage.rowsIn(db);
  // One row per key: PostgreSQL refuses a statement that updates a row twice.
  const rows = held ?? new Map<string, UsageCountersTable>();
  for (const d of deltas) {
    for (const [period, bucket] of [
      ['h', d.at.slice(0, 13)],
      ['d', d.at.slice(0, 10)],
    ] as const) {
      const id = `${d.projectId} ${period} ${bucket} ${d.metric}`;
      const row = rows.get(id);
      if (row) row.value += d.delta;
      else rows.set(id, { project_id: d.projectId, period, bucket, metric: d.metric, value: d.delta });
    }
  }
  if (!held) await upsert(db, [...rows.values()]).execute();
}

/** Drops hourly rows older than HOURLY_KEEP_MS. */
export async function pruneHourlyUsage(db: Kysely<Database>, now: Date): Promise<void> {
  const cutoff = new Date(now.getTime() - HOURLY_KEEP_MS).toISOString().slice(0, 13);
  await db.deleteFrom('usage_counters').where('period', '=', 'h').where('bucket', '<', cutoff).execute();
}
