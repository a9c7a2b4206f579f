import { SqliteAdapter, sql, type Compilable, type Kysely } from 'kysely';
import { signals, TASK_READY, type WorkSignal } from '../signals.js';
import { errorCode } from './errors.js';
import { notifyQuery } from './notify.js';
import { LAST_WRITES } from './prepared.js';
import type { Database } from './schema.js';
import { markValues, ShapeTemplates } from './shape-template.js';

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

/** A held-back write's statement at the end of its transaction, built from its values or from their markers. */
interface Part {
  real(trx: Kysely<Database>): Compiled;
  /** Its values and their shape (its name in it), and the statement built from their markers; null where the values are not plain (db/shape-template.ts): then it is built every time. */
  template: { leaves: unknown[]; shape: string; build(trx: Kysely<Database>): Compiled } | null;
}

/** A held-back write: its statement, and for a gated one the error when it changed no row. */
interface Held {
  /** The statement, its markers numbered from `first` (on PostgreSQL a part of the one statement). */
  part(first: number): Part;
  gate: (() => Error) | null;
}

interface TxState {
  woken: Set<WorkSignal>;
  /** The held-back writes by name, each making its statement from the rows it gathered. */
  last: Map<string, Held>;
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

/** PostgreSQL's division_by_zero: how the last writes' statement says that a gated write changed no row. */
const GATE_FAILED = '22012';

/**
 * The held-back writes of `trx` (sorted by key, so concurrent transactions lock shared rows in
 * one order) and its NOTIFYs: on SQLite one statement after another (in process, no round trip),
 * on PostgreSQL one statement, data-modifying CTEs beside the pg_notify calls. A gated write
 * (a task's completion under its lease) that changes no row fails the transaction with its error:
 * on PostgreSQL the statement divides by the count of the rows it changed, so that the statement
 * itself fails and takes the other writes with it, also where it is sent without a transaction.
 */
async function flushLast(trx: Kysely<Database>, state: TxState): Promise<void> {
  const held = [...state.last.entries()].sort(byKey).map(([, h]) => h);
  if (trx.getExecutor().adapter instanceof SqliteAdapter) {
    for (const h of held) {
      const { real, template } = h.part(0);
      const query = template
        ? TEMPLATES.compile(
            trx,
            template.shape,
            template.leaves,
            () => template.build(trx).compile(),
            () => real(trx).compile(),
          )
        : real(trx).compile();
      const { rows } = await trx.executeQuery(query);
      if (h.gate && rows.length === 0) throw h.gate();
    }
    return;
  }
  const signals = [...state.woken];
  if (held.length === 0 && signals.length === 0) return;
  const gated = held.map((h) => h.gate !== null);
  let first = 0;
  const parts = held.map((h) => {
    const p = h.part(first);
    first += p.template?.leaves.length ?? 0;
    return p;
  });
  const ready = parts.flatMap((p) => (p.template ? [p.template] : []));
  const real = () =>
    lastWrites(
      parts.map((p) => p.real(trx)),
      gated,
      signals,
    ).compile(trx);
  const query =
    ready.length === parts.length
      ? TEMPLATES.compile(
          trx,
          `${ready.map((t) => t.shape).join(' ')} | ${signals.join(' ')}`,
          ready.flatMap((t) => t.leaves),
          () =>
            lastWrites(
              ready.map((t) => t.build(trx)),
              gated,
              signals,
            ).compile(trx),
          real,
        )
      : real();
  try {
    await trx.executeQuery(query);
  } catch (err) {
    const gate = held.find((h) => h.gate)?.gate;
    if (gate && errorCode(err) === GATE_FAILED) throw gate();
    throw err;
  }
}

/** The held-back writes by shape, each shape naming its writes (db/shape-template.ts). */
const TEMPLATES = new ShapeTemplates();

/** The one statement of PostgreSQL's last writes: the writes as data-modifying CTEs, the gates' checks and the NOTIFYs. */
function lastWrites(writes: Compiled[], gated: boolean[], signals: WorkSignal[]) {
  const ctes = writes.map((w, i) => sql`${sql.raw(`w${i}`)} as (${w})`);
  const gates = writes.flatMap((_, i) => (gated[i] ? [sql`(select 1 / count(*) from ${sql.raw(`w${i}`)})`] : []));
  const columns = [...gates, ...signals.map((s) => notifyQuery(s))];
  const select = columns.length > 0 ? sql.join(columns) : sql`1`;
  const statement = ctes.length > 0 ? sql`with ${sql.join(ctes)} select ${select}` : sql`select ${select}`;
  return sql`${sql.raw(LAST_WRITES)}${statement}`;
}

/**
 * A write held back to the end of a transact transaction: `rowsIn(db)` gives the rows gathered by
 * key in `db`'s transaction, for the caller to add to or merge into (null when `db` is not one
 * opened by transact: the caller writes at once); at the end `args` makes the statement's values of
 * them, sorted by key (so concurrent transactions lock shared rows in one order), and `build` the
 * statement, compiled once per shape of those values (db/shape-template.ts): `build` uses them
 * only as values, and any logic on them belongs in `args`. Made once per module.
 * `gate`: the statement returns the rows it changed (`returning`), and changing none fails the
 * transaction with the error `gate` makes of the entries (at most one gated write a transaction).
 */
export function heldWrite<T, A>(
  name: string,
  write: {
    args: (entries: [string, T][]) => A;
    build: (trx: Kysely<Database>, args: A) => Compiled;
    gate?: (entries: [string, T][]) => Error;
  },
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
        const sorted = () => [...made.entries()].sort(byKey);
        const part = (first: number): Part => {
          const args = write.args(sorted());
          const m = markValues(args, first);
          return {
            real: (trx) => write.build(trx, args),
            template: m && {
              leaves: m.leaves,
              shape: `${name}(${m.shape})`,
              build: (trx) => write.build(trx, m.marked()),
            },
          };
        };
        const gate = write.gate;
        state.last.set(name, {
          part,
          gate: gate ? () => gate(sorted()) : null,
        });
        rows = made;
      }
      return rows;
    },
  };
}

/** The values of a held-back write's entries, in their order: most writes' `args`. */
export const valuesOf = <T>(entries: [string, T][]): T[] => entries.map(([, v]) => v);

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
