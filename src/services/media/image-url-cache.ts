import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import type { ImageDerivativesTable } from '../../db/schema.js';
import { addUsage } from '../../db/queries/usage.js';
import { compiledOnce } from '../../db/compiled.js';
import { imageCacheBlobKey } from '../../storage/keys.js';

// The cache of image-URL results: bytes in the blob store under image-cache/, one row each in
// image_derivatives (what it is, its size, when it was last served). The cache has its own byte
// budget (MEDIAD_IMAGE_URL_CACHE_BYTES): past it the least recently used results go.

/** last_used is rewritten at most this often per result (a hit is a read, not a write). */
const TOUCH_MS = 60_000;
const EVICT_BATCH = 100;

type CacheDeps = Pick<Deps, 'db' | 'blobs' | 'clock' | 'config' | 'log' | 'tmpDir'>;

const derivativeById = compiledOnce(
  (db, id: string) => db.selectFrom('image_derivatives').selectAll().where('id', '=', id),
  1,
);

/** A result's row: every request reads it (a hit's one read), so its SQL is compiled once; on this connection. */
export async function findDerivative(deps: Pick<Deps, 'db'>, id: string): Promise<ImageDerivativesTable | undefined> {
  return (await derivativeById({ db: deps.db, reader: null }, id))[0];
}

/** Results served since the last flush whose last_used is older than TOUCH_MS, per database. */
const pendingTouches = new WeakMap<object, { ids: Set<string>; timer: NodeJS.Timeout | null }>();
/** Pending touches are written this long after the first of them (one UPDATE for all). */
const FLUSH_MS = 5_000;

/**
 * Marks a result as served now (for eviction), at most once a minute: a hit is a read, so the
 * touches are gathered and written in one UPDATE a few seconds later, or before an eviction pass.
 */
export function touchDerivative(deps: CacheDeps, row: ImageDerivativesTable): void {
  if (deps.clock.now().getTime() - Date.parse(row.last_used) < TOUCH_MS) return;
  let batch = pendingTouches.get(deps.db);
  if (!batch) pendingTouches.set(deps.db, (batch = { ids: new Set(), timer: null }));
  batch.ids.add(row.id);
  batch.timer ??= setTimeout(() => {
    void flushTouches(deps).catch((err: unknown) => deps.log.warn({ err }, 'image cache: last_used not updated'));
  }, FLUSH_MS).unref();
}

/** Writes the pending touches now. */
export async function flushTouches(deps: Pick<Deps, 'db' | 'clock'>): Promise<void> {
  const batch = pendingTouches.get(deps.db);
  if (!batch) return;
  if (batch.timer) clearTimeout(batch.timer);
  batch.timer = null;
  const ids = [...batch.ids];
  batch.ids.clear();
  const now = iso(deps.clock.now());
  for (let i = 0; i < ids.length; i += 500)
    await deps.db
      .updateTable('image_derivatives')
      .set({ last_used: now })
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
}

export interface NewDerivative {
  id: string;
  projectId: string;
  fileId: string;
  type: string;
  data: Buffer;
}

/** Stores a result (called after it was sent), counts usage, then keeps the cache within its budget. */
export async function storeDerivative(deps: CacheDeps, d: NewDerivative): Promise<void> {
  const now = iso(deps.clock.now());
  await addUsage(deps.db, [
    { projectId: d.projectId, at: now, metric: 'image_transformations', delta: 1 },
    { projectId: d.projectId, at: now, metric: 'image_derived_bytes', delta: d.data.length },
  ]);
  if (d.data.length > deps.config.imageUrls.cacheBytes) return;
  const key = imageCacheBlobKey(d.projectId, d.id);
  const tmp = path.join(deps.tmpDir, `image-url-${randomBytes(8).toString('hex')}`);
  try {
    await fs.writeFile(tmp, d.data);
    await deps.blobs.putFile(key, tmp, { contentType: d.type });
  } finally {
    await fs.rm(tmp, { force: true });
  }
  await deps.db
    .insertInto('image_derivatives')
    .values({
      id: d.id,
      project_id: d.projectId,
      file_id: d.fileId,
      blob_key: key,
      type: d.type,
      size: d.data.length,
      created: now,
      last_used: now,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  const known = cacheBytes.get(deps.db);
  if (known) known.bytes += d.data.length;
  await evictOverBudget(deps);
}

let evicting: Promise<void> | null = null;
/** Re-read the cache's size from the database at least this often (other processes store too). */
const RECOUNT_MS = 60_000;
/**
 * The cache's size as this process last counted it, plus what it stored since: summing the table
 * at every store would read every row of a large cache on each miss. An overestimate (rows other
 * processes or deletions removed) only makes the next store count again.
 */
const cacheBytes = new WeakMap<object, { bytes: number; at: number }>();

/** Removes the least recently used results until the cache is within its budget (one pass at a time per process). */
export function evictOverBudget(deps: CacheDeps): Promise<void> {
  const budget = deps.config.imageUrls.cacheBytes;
  const known = cacheBytes.get(deps.db);
  const now = deps.clock.now().getTime();
  if (known && known.bytes <= budget && now - known.at < RECOUNT_MS) return Promise.resolve();
  evicting ??= (async () => {
    try {
      // What was served lately counts as used before anything is chosen to go.
      await flushTouches(deps);
      for (;;) {
        const total = await deps.db
          .selectFrom('image_derivatives')
          .select((eb) => eb.fn.sum<number | string | null>('size').as('bytes'))
          .executeTakeFirst();
        const bytes = Number(total?.bytes ?? 0);
        cacheBytes.set(deps.db, { bytes, at: deps.clock.now().getTime() });
        let over = bytes - budget;
        if (over <= 0) return;
        const oldest = await deps.db
          .selectFrom('image_derivatives')
          .select(['id', 'blob_key', 'size'])
          .orderBy('last_used')
          .orderBy('created')
          .limit(EVICT_BATCH)
          .execute();
        const drop: typeof oldest = [];
        for (const row of oldest) {
          if (over <= 0) break;
          drop.push(row);
          over -= Number(row.size);
        }
        if (drop.length === 0) return;
        await removeDerivatives(deps, drop);
      }
    } finally {
      evicting = null;
    }
  })();
  return evicting;
}

async function removeDerivatives(deps: Pick<Deps, 'db' | 'blobs'>, rows: { id: string; blob_key: string }[]) {
  if (rows.length === 0) return;
  await deps.db
    .deleteFrom('image_derivatives')
    .where(
      'id',
      'in',
      rows.map((r) => r.id),
    )
    .execute();
  for (const r of rows) await deps.blobs.delete(r.blob_key);
}

/** Deletes the cached results of these source files (the files were deleted). */
export async function dropDerivativesOf(deps: Pick<Deps, 'db' | 'blobs'>, fileIds: string[]): Promise<void> {
  if (fileIds.length === 0) return;
  const rows = await deps.db
    .selectFrom('image_derivatives')
    .select(['id', 'blob_key'])
    .where('file_id', 'in', fileIds)
    .execute();
  await removeDerivatives(deps, rows);
}

/** Deletes the cached results of a project whose source files are gone (after a file or media deletion). */
export async function dropOrphanDerivatives(deps: Pick<Deps, 'db' | 'blobs'>, projectId: string): Promise<void> {
  const rows = await deps.db
    .selectFrom('image_derivatives')
    .select(['id', 'blob_key'])
    .where('project_id', '=', projectId)
    .where('file_id', 'not in', deps.db.selectFrom('files').select('id').where('project_id', '=', projectId))
    .execute();
  await removeDerivatives(deps, rows);
}

/** Deletes every cached result of a project (the project is purged). */
export async function dropProjectDerivatives(deps: Pick<Deps, 'db' | 'blobs'>, projectId: string): Promise<void> {
  const rows = await deps.db
    .selectFrom('image_derivatives')
    .select(['id', 'blob_key'])
    .where('project_id', '=', projectId)
    .execute();
  await removeDerivatives(deps, rows);
}

/** Identical concurrent computations share one promise: the first caller runs it, the rest wait for it. */
export class SingleFlight<T> {
  private readonly running = new Map<string, Promise<T>>();

  /** `shared` is true for callers that waited for another's computation. */
  run(key: string, compute: () => Promise<T>): { promise: Promise<T>; shared: boolean } {
    const existing = this.running.get(key);
    if (existing) return { promise: existing, shared: true };
    const promise = compute().finally(() => this.running.delete(key));
    this.running.set(key, promise);
    return { promise, shared: false };
  }
}

/** At most `limit` computations at once; the others wait in order. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async use<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
