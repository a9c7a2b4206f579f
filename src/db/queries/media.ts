import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { lastWrite } from '../transact.js';

/** The media a transact transaction touched and when, updated at its end (db/transact.ts: a media's row is shared by all its files' writes). */
const held = new WeakMap<Kysely<Database>, Map<string, string>>();

function update(db: Kysely<Database>, ids: string[], now: string) {
  return db.updateTable('media').set({ updated: now }).where('id', 'in', ids);
}

/** Sets a media's `updated` to `now` (in a transact transaction, at its end). */
export async function touchMedia(trx: Kysely<Database>, mediaId: string, now: string): Promise<void> {
  let touched = held.get(trx);
  if (!touched) {
    const gathered = new Map<string, string>();
    const write = {
      // Sorted: concurrent transactions lock the rows in one order; the latest time for all.
      query: (t: Kysely<Database>) => update(t, [...gathered.keys()].sort(), [...gathered.values()].sort().at(-1)!),
    };
    if (lastWrite(trx, 'media', write)) held.set(trx, (touched = gathered));
  }
  if (!touched) {
    await update(trx, [mediaId], now).execute();
    return;
  }
  const prev = touched.get(mediaId);
  if (prev === undefined || prev < now) touched.set(mediaId, now);
}
