import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { heldWrite } from '../transact.js';

function update(db: Kysely<Database>, ids: string[], now: string) {
  return db.updateTable('media').set({ updated: now }).where('id', 'in', ids);
}

/** The media touched by id and when: at the end, the latest time of the transaction for all. */
const heldTouches = heldWrite('media', {
  args: (entries: [string, string][]) => ({
    ids: entries.map(([id]) => id),
    at: entries
      .map(([, at]) => at)
      .sort()
      .at(-1)!,
  }),
  build: (t, { ids, at }) => update(t, ids, at),
});

/**
 * Sets a media's `updated` to `now` (in a transact transaction, at its end: a media's row is shared
 * by all its files' writes, db/transact.ts; the latest time of the transaction for all it touched).
 */
export async function touchMedia(trx: Kysely<Database>, mediaId: string, now: string): Promise<void> {
  const held = heldTouches.rowsIn(trx);
  if (!held) {
    await update(trx, [mediaId], now).execute();
    return;
  }
  const prev = held.get(mediaId);
  if (prev === undefined || prev < now) held.set(mediaId, now);
}
