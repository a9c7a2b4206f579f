import { SqliteAdapter, sql, type Compilable, type Kysely } from 'kysely';
import { signals, type WorkSignal } from '../signals.js';
import { notifyQuery } from './notify.js';
import type { Database } from './schema.js';

// The commit helper: work created in a transaction (tasks, events, deliveries) asks for its
// wake-up with `wake`, and the wake-ups fire once the transaction has committed — never for a
// transaction that rolled back, and never forgotten after one that committed.
//
// Writes to rows that many transactions share (a project's counters and usage, a media's
// `updated`) are held back with `lastWrite` and made at the end of the transaction, with its
// NOTIFYs: on PostgreSQL a row lock lasts until the commit, so a shared row written early made
// every concurrent transaction that writes it wait through all of the first one's round trips
// (measured: two worker processes' task completions queued behind each other's for ~300 ms
// per task). Made last, in one statement, the lock is held for that statement and the commit.

/** A write held back to the end of a transaction: `query` is built then, from what was gathered. */
export interface LastWrite {
  query(trx: Kysely<Database>): Compilable & { execute(): Promise<unknown> };
}

interface TxState {
  woken: Set<WorkSignal>;
  last: Map<string, LastWrite>;
}

const pending = new WeakMap<Kysely<Database>, TxState>();

/** Runs `fn` in a transaction; the wake-ups it asked for fire in this process after the commit. */
export async function transact<T>(db: Kysely<Database>, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  const state: TxState = { woken: new Set(), last: new Map() };
  const result = await db.transaction().execute(async (trx) => {
    pending.set(trx, state);
    const r = await fn(trx);
    await flushLast(trx, state);
    return r;
  });
  for (const signal of state.woken) signals.emit(signal);
  return result;
}

/**
 * The held-back writes of `trx` (sorted by key, so concurrent transactions lock shared rows in
 * one order) and its NOTIFYs: on SQLite one statement after another (in process, no round trip),
 * on PostgreSQL one statement, data-modifying CTEs beside the pg_notify calls.
 */
async function flushLast(trx: Kysely<Database>, state: TxState): Promise<void> {
  const writes = [...state.last.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, w]) => w.query(trx));
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
 * Holds `write` back to the end of `db`'s transaction (the first write of `key` counts: it should
 * read what its caller gathers for the transaction); false when `db` is not a transaction opened
 * by transact, and the caller writes at once.
 */
export function lastWrite(db: Kysely<Database>, key: string, write: LastWrite): boolean {
  const state = pending.get(db);
  if (!state) return false;
  if (!state.last.has(key)) state.last.set(key, write);
  return true;
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
