import os from 'node:os';
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import { compiledTemplate } from '../../db/compiled.js';
import type { Database } from '../../db/schema.js';
import { heldWrite } from '../../db/transact.js';
import { crashPoint } from '../../faults.js';
import { randomBase62 } from '../../ids.js';
import { isAlive } from '../../process-liveness.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { packageKey, packageOwner } from '../../storage/keys.js';
import { HLS_MIME } from '../../media/hls-playlists.js';

// Blobs and rows live in two stores, so no single transaction covers both. The journal closes
// the gap: a 'put' entry is committed before a blob is written and removed in the transaction
// that inserts the row referencing it; a 'delete' entry is written in the transaction that
// deletes the row and removed once the bytes are gone. Whatever a crash leaves between those
// steps is an entry, and the sweeper settles it: a blob that no committed row references is
// deleted. No state exists where a complete blob has neither a row nor an entry.

/** This process, as journal entries name their writer: host, pid, and a per-start instance. */
export const JOURNAL_OWNER = `${os.hostname()}:${process.pid}:${randomBase62(8)}`;

/** Entries of writers on other hosts (or whose liveness is unknown) are settled after this long. */
export const STALE_ENTRY_MS = 24 * 3600_000;

type Db = Kysely<Database>;

const putEntries = (db: Db, keys: string[], created: string) =>
  db
    .insertInto('blob_journal')
    .values(keys.map((blob_key) => ({ blob_key, op: 'put' as const, owner: JOURNAL_OWNER, created })));

/** One entry, a task's usual output, compiled once (db/compiled.ts): on PostgreSQL parsed and planned once per connection. */
const putEntry = compiledTemplate((db: Db, key: string, created: string) => putEntries(db, [key], created), 2);

/** Commits 'put' entries for blobs about to be written (call before writing them). */
export async function intendPut(deps: Pick<Deps, 'db' | 'clock' | 'config'>, keys: string[]): Promise<void> {
  const now = iso(deps.clock.now());
  const [only] = keys;
  if (keys.length === 1 && only !== undefined) await deps.db.executeQuery(putEntry(deps.db, only, now));
  else await putEntries(deps.db, keys, now).execute();
  crashPoint(deps.config, 'blob.put.intended');
}

/**
 * Names these keys as being written again, unless an entry already does (a deletion in flight
 * keeps its own): a package still growing after its processing row was deleted (whose deletion
 * settled the first entry) stays covered if this process then dies.
 */
export async function reassertPut(deps: Pick<Deps, 'db' | 'clock'>, keys: string[]): Promise<void> {
  const now = iso(deps.clock.now());
  await deps.db
    .insertInto('blob_journal')
    .values(keys.map((blob_key) => ({ blob_key, op: 'put' as const, owner: JOURNAL_OWNER, created: now })))
    .onConflict((oc) => oc.column('blob_key').doNothing())
    .execute();
}

const dropEntries = (db: Db, keys: string[]) => db.deleteFrom('blob_journal').where('blob_key', 'in', keys);

// Settled with the transaction's other last writes (db/transact.ts): on PostgreSQL one round trip
// fewer for every stored file, and the entries go in the same commit as the rows all the same.
const heldSettles = heldWrite('blob_journal.settle', {
  args: (entries: [string, true][]) => entries.map(([key]) => key),
  build: dropEntries,
});

/** In the transaction that inserts the rows referencing these blobs: they are settled. */
export async function settlePut(trx: Db, keys: string[]): Promise<void> {
  const held = heldSettles.rowsIn(trx);
  if (held) for (const key of keys) held.set(key, true);
  else await dropEntries(trx, keys).execute();
}

/** After the rows' transaction failed: the blobs go, then their entries. */
export async function abandonPut(deps: Pick<Deps, 'db' | 'blobs'>, keys: string[]): Promise<void> {
  for (const key of keys) await removeBlob(deps.blobs, key).catch(() => undefined);
  await dropEntries(deps.db, keys)
    .execute()
    .catch(() => undefined);
}

/** In the transaction that deletes the rows: their blobs are to be deleted. */
export async function intendDelete(trx: Db, keys: string[], now: string): Promise<void> {
  if (keys.length === 0) return;
  await trx
    .insertInto('blob_journal')
    .values(keys.map((blob_key) => ({ blob_key, op: 'delete' as const, owner: JOURNAL_OWNER, created: now })))
    .onConflict((oc) => oc.column('blob_key').doUpdateSet({ op: 'delete', owner: JOURNAL_OWNER, created: now }))
    .execute();
}

/** After the delete committed: the bytes, then the entries. */
export async function completeDelete(deps: Pick<Deps, 'db' | 'blobs' | 'config'>, keys: string[]): Promise<void> {
  crashPoint(deps.config, 'blob.delete.committed');
  for (const key of keys) await removeBlob(deps.blobs, key);
  crashPoint(deps.config, 'blob.delete.removed');
  if (keys.length > 0)
    await deps.db.deleteFrom('blob_journal').where('blob_key', 'in', keys).where('op', '=', 'delete').execute();
}

/**
 * Whether the writer of an entry has stopped: a process of this host that no longer runs (or
 * whose pid is now this process, started anew), or any writer after STALE_ENTRY_MS.
 */
export function writerGone(
  owner: string,
  created: string,
  now: Date,
  alive: (pid: number) => boolean = isAlive,
): boolean {
  if (owner === JOURNAL_OWNER) return false;
  if (Date.parse(created) + STALE_ENTRY_MS < now.getTime()) return true;
  const [host, pidText] = owner.split(':');
  const pid = Number(pidText);
  if (host !== os.hostname() || !Number.isSafeInteger(pid)) return false;
  return pid === process.pid || !alive(pid);
}

/**
 * Settles the entries whose writer has stopped: a blob no files row references is deleted (a
 * 'put' whose row never committed, a 'delete' whose bytes were not removed yet), then the entry.
 * A blob a row references is never touched. Returns the number of blobs deleted.
 */
export async function sweepBlobJournal(deps: Pick<Deps, 'db' | 'blobs' | 'clock' | 'log'>): Promise<number> {
  const now = deps.clock.now();
  const entries = (await deps.db.selectFrom('blob_journal').selectAll().execute()).filter((e) =>
    writerGone(e.owner, e.created, now),
  );
  let deleted = 0;
  for (const entry of entries) {
    const referenced = await deps.db
      .selectFrom('files')
      .select('id')
      .where('blob_key', '=', packageOwner(entry.blob_key) ?? entry.blob_key)
      .executeTakeFirst();
    if (!referenced) {
      await removeBlob(deps.blobs, entry.blob_key);
      deleted++;
    }
    await deps.db
      .deleteFrom('blob_journal')
      .where('blob_key', '=', entry.blob_key)
      .where('owner', '=', entry.owner)
      .execute();
  }
  if (entries.length > 0)
    deps.log.info(
      { entries: entries.length, deleted },
      'blob journal swept: unreferenced blobs left by a stopped process removed',
    );
  return deleted;
}

/** Deletes a blob, or for a package key (storage/keys.ts) every entry of the package. */
async function removeBlob(blobs: BlobStore, key: string): Promise<void> {
  if (packageOwner(key) === null) return blobs.delete(key);
  const entries: string[] = [];
  for await (const entry of blobs.list(`${key}/`)) entries.push(entry);
  for (const entry of entries) await blobs.delete(entry);
}

/** The journal keys a file row's bytes take: its blob, and its package when it heads one (an HLS master). */
export function rowBlobKeys(row: { blob_key: string; type: string }): string[] {
  return row.type.startsWith(HLS_MIME) ? [row.blob_key, packageKey(row.blob_key)] : [row.blob_key];
}
