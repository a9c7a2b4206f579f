import type { Kysely } from 'kysely';
import { signals, type WorkSignal } from '../signals.js';
import { notify } from './notify.js';
import type { Database } from './schema.js';

// The commit helper: work created in a transaction (tasks, events, deliveries) asks for its
// wake-up with `wake`, and the wake-ups fire once the transaction has committed — never for a
// transaction that rolled back, and never forgotten after one that committed.

const pending = new WeakMap<Kysely<Database>, Set<WorkSignal>>();

/** Runs `fn` in a transaction; the wake-ups it asked for fire in this process after the commit. */
export async function transact<T>(db: Kysely<Database>, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  const woken = new Set<WorkSignal>();
  const result = await db.transaction().execute((trx) => {
    pending.set(trx, woken);
    return fn(trx);
  });
  for (const signal of woken) signals.emit(signal);
  return result;
}

/**
 * Wakes the loop that handles `signal`'s work, in every process: here after `db`'s transaction
 * commits (at once when `db` is not one opened by transact), elsewhere by NOTIFY on PostgreSQL.
 */
export async function wake(db: Kysely<Database>, signal: WorkSignal): Promise<void> {
  const woken = pending.get(db);
  if (woken) {
    // PostgreSQL delivers one notification per channel and transaction however often it is sent.
    if (woken.has(signal)) return;
    woken.add(signal);
  } else setImmediate(() => signals.emit(signal));
  await notify(db, signal);
}
