import { SqliteAdapter, sql, type Compilable, type Kysely } from 'kysely';
import { signals, TASK_READY, type WorkSignal } from '../signals.js';
import { notifyQuery } from './notify.js';
import type { Database } from './schema.js';

// The commit helper: work created in a transaction (tasks, events, deliveries) asks for its
// wake-up with `wake`, and the wake-ups fire once the transaction has committed — never for a
// transaction that rolled back, and never forgotten after one that committed.
//
// Writes to rows that many transactions share (a project's counters and usage, a media's
// `updated`) are held back with `heldWrite` and made at the end of the transaction, with its
// NOTIFYs: on PostgreSQL a row lock lasts until the commit, so a shared row written early made
// every concurrent transaction that writes it wait through all of the first one's round trips
// (measured: two worker processes' task completions queued behind each other's for ~300 ms
// per task). Made last, in one statement, the lock is held for that statement and the commit.
// The outbox's events are held back the same way (events/record.ts), not for a lock but for the
// round trips: on PostgreSQL they join that one statement.

/** A statement made at the end of a transaction from what was gathered for it. */
type Compiled = Compilable & { execute(): Promise<unknown> };

interface TxState {
  woken: Set<WorkSignal>;
  /** The held-back writes by name, each making its statement from the rows it gathered. */
  last: Map<string, (trx: Kysely<Database>) => Compiled>;
}

const pending = new WeakMap<Kysely<Database>, TxState>();

/** Entries (and held-back writes) by key: concurrent transactions lock shared rows in one order. */
const byKey = (a: [string, unknown], b: [string, unknown]) => (a[0] < b[0] ? -1 : 1);

/**
 * Runs `fn` in a transaction; the wake-ups it asked for fire in this process after the commit: the
 * task workers' at once, the others (event dispatch, webhooks) on the next turn of the event loop.
 * Each loop's pass is a transaction on SQLite's one connection; woken first, the dispatch held the
 * connection while the new task's claim waited (1.4–5.5 ms between a task's commit and its claim).
 */
export async function transact<T>(db: Kysely<Database>, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  const state: TxState = { woken: new Set(), last: new Map() };
  const result = await db.transaction().execute(async (trx) => {
    pending.set(trx, state);
    const r = await fn(trx);
    await flushLast(trx, state);
    return r;
  });
  for (const signal of state.woken) {
    if (signal === TASK_READY) signals.emit(signal);
    else setImmediate(() => signals.emit(signal));
  }
  return result;
}

/**
 * The held-back writes of `trx` (sorted by key, so concurrent transactions lock shared rows in
 * one order) and its NOTIFYs: on SQLite one statement after another (in process, no round trip),
 * on PostgreSQL one statement, data-modifying CTEs beside the pg_notify calls.
 */
async function flushLast(trx: Kysely<Database>, state: TxState): Promise<void> {
  const writes = [...state.last.entries()].sort(byKey).map(([, write]) => write(trx));
  if (trx.getExecutor().adapter instanceof SqliteAdapter) {
    for (const w of writes) await w.execute();
    return;
  }
  const notifies = [...state.woken].map((s) => notifyQuery(s));
  if (writes.length === 0 && notifies.length === 0) return;
  const ctes = writes.map((w, i) => sql`${sql.raw(`w${i}`)} as (${w})`);
  const select = notifies.length > 0 ? sql.join(notifies) : sql`1`;
  await (ctes.length > 0 ? sql`with ${sql.join(ctes)} select ${select}` : sql`select ${select}`).execute(trx);
}

/**
 * A write held back to the end of a transact transaction: `rowsIn(db)` gives the rows gathered by
 * key in `db`'s transaction, for the caller to add to or merge into (null when `db` is not one
 * opened by transact: the caller writes at once); at the end `build` makes one statement of them,
 * sorted by key (so concurrent transactions lock shared rows in one order). Made once per module.
 */
export function heldWrite<T>(
  name: string,
  build: (trx: Kysely<Database>, entries: [string, T][]) => Compiled,
): { rowsIn(db: Kysely<Database>): Map<string, T> | null } {
  const gathered = new WeakMap<TxState, Map<string, T>>();
  return {
    rowsIn(db) {
      const state = pending.get(db);
      if (!state) return null;
      let rows = gathered.get(state);
      if (!rows) {
        const made = new Map<string, T>();
        gathered.set(state, made);
        state.last.set(name, (trx) => build(trx, [...made.entries()].sort(byKey)));
        rows = made;
      }
      return rows;
    },
  };
}

/**
 * Wakes the loop that handles `signal`'s work, in every process: here after `db`'s transaction
 * commits (at once when `db` is not one opened by transact), elsewhere by NOTIFY on PostgreSQL
 * (sent with the transaction's last writes, delivered when it commits).
 */
export async function wake(db: Kysely<Database>, signal: WorkSignal): Promise<void> {
  const state = pending.get(db);
  if (state) {
    // PostgreSQL delivers one notification per channel and transaction however often it is sent.
    state.woken.add(signal);
    return;
  }
  setImmediate(() => signals.emit(signal));
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`select ${notifyQuery(signal)}`.execute(db);
}
