import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import type { Config } from '../../config.js';
import type { ImageDerivativesTable } from '../../db/schema.js';
import { recentImageUrlSettings } from './image-url-keys.js';

// The image-URL cache's budgets (docs/image-urls.md): each project's own (its settings'
// cache_bytes, else MEDIAD_IMAGE_URL_PROJECT_CACHE_BYTES) within the whole cache's
// (MEDIAD_IMAGE_URL_CACHE_BYTES). After a store, the project's least recently used results over
// its budget go first, then the least recently used of all over the whole budget: one project's
// burst of misses evicts its own results, not every other project's.

/** last_used is rewritten at most this often per result (a hit is a read, not a write). */
const TOUCH_MS = 60_000;
const EVICT_BATCH = 100;
/** Re-read a size from the database at least this often (other processes store too). */
const RECOUNT_MS = 60_000;

export type BudgetDeps = Pick<Deps, 'db' | 'blobs' | 'clock' | 'config' | 'log'>;
type CachedRow = Pick<ImageDerivativesTable, 'id' | 'blob_key' | 'size' | 'project_id'>;

/** A project's budget in force: its own, else the server's default, never above the whole cache's. */
export function budgetOf(config: Pick<Config, 'imageUrls'>, cacheBytes: number | null): number {
  const { cacheBytes: whole, projectCacheBytes } = config.imageUrls;
  return Math.min(cacheBytes ?? projectCacheBytes, whole);
}

/** The project's budget from its settings as read at most a few seconds ago (no settings yet: the default). */
export async function projectBudget(deps: Pick<Deps, 'db' | 'config'>, projectId: string): Promise<number> {
  const settings = await recentImageUrlSettings(deps, projectId);
  return budgetOf(deps.config, settings?.cache_bytes ?? null);
}

/** Results served since the last flush whose last_used is older than TOUCH_MS, per database. */
const pendingTouches = new WeakMap<object, { ids: Set<string>; timer: NodeJS.Timeout | null }>();
/** Pending touches are written this long after the first of them (one UPDATE for all). */
const FLUSH_MS = 5_000;

/**
 * Marks a result as served now (for eviction), at most once a minute: a hit is a read, so the
 * touches are gathered and written in one UPDATE a few seconds later, or before an eviction pass.
 */
export function touchDerivative(deps: Pick<Deps, 'db' | 'clock' | 'log'>, row: ImageDerivativesTable): void {
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

/**
 * Sizes as this process last counted them, plus what it stored since, minus what it deleted:
 * summing the table at every store would read every row of a large cache on each miss. The whole
 * cache's under '' (no project id is empty). A count off by other processes' work is put right
 * by the next recount (at most RECOUNT_MS later, or at once when it looks over budget).
 */
const counts = new WeakMap<object, Map<string, { bytes: number; at: number }>>();
const WHOLE = '';

function countsOf(db: object): Map<string, { bytes: number; at: number }> {
  let map = counts.get(db);
  if (!map) counts.set(db, (map = new Map()));
  return map;
}

function add(db: object, projectId: string, delta: number): void {
  const map = countsOf(db);
  for (const k of [WHOLE, projectId]) {
    const known = map.get(k);
    if (known) known.bytes += delta;
  }
}

/** Counts a result just stored in its project's and the whole cache's sizes. */
export function noteStored(db: object, projectId: string, bytes: number): void {
  add(db, projectId, bytes);
}

function needsPass(deps: BudgetDeps, key: string, budget: number): boolean {
  const known = countsOf(deps.db).get(key);
  return !known || known.bytes > budget || deps.clock.now().getTime() - known.at >= RECOUNT_MS;
}

/** Deletes results (rows, then blobs) and takes them off the counts. */
export async function removeDerivatives(deps: Pick<Deps, 'db' | 'blobs'>, rows: CachedRow[]): Promise<void> {
  if (rows.length === 0) return;
  await deps.db
    .deleteFrom('image_derivatives')
    .where(
      'id',
      'in',
      rows.map((r) => r.id),
    )
    .execute();
  for (const r of rows) add(deps.db, r.project_id, -Number(r.size));
  for (const r of rows) await deps.blobs.delete(r.blob_key);
}

/** A project's cached results now: bytes and how many (an operator's question; also recounts the project). */
export async function projectCacheUsage(
  deps: Pick<Deps, 'db' | 'clock'>,
  projectId: string,
): Promise<{ bytes: number; results: number }> {
  const row = await deps.db
    .selectFrom('image_derivatives')
    .select((eb) => [eb.fn.sum<number | string | null>('size').as('bytes'), eb.fn.countAll<number | string>().as('n')])
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  const bytes = Number(row?.bytes ?? 0);
  countsOf(deps.db).set(projectId, { bytes, at: deps.clock.now().getTime() });
  return { bytes, results: Number(row?.n ?? 0) };
}

/**
 * One pass of `key` (a project id, or WHOLE) at a time per process: a caller that comes while it
 * waits or runs makes it go round once more (it may have counted before that caller's row was
 * there). Passes run one after another (one lane per database), so two of them never choose the
 * same row and take it off the counts twice.
 */
const passes = new WeakMap<object, Map<string, { again: boolean; budget: number; done: Promise<void> }>>();
const lanes = new WeakMap<object, Promise<void>>();

function pass(deps: BudgetDeps, key: string, budget: number): Promise<void> {
  if (!needsPass(deps, key, budget)) return Promise.resolve();
  let map = passes.get(deps.db);
  if (!map) passes.set(deps.db, (map = new Map()));
  const queued = map.get(key);
  if (queued) {
    queued.again = true;
    queued.budget = budget;
    return queued.done;
  }
  const entry = { again: true, budget, done: Promise.resolve() };
  const run = async () => {
    try {
      while (entry.again) {
        entry.again = false;
        await trim(deps, key, entry.budget);
      }
    } finally {
      map.delete(key);
    }
  };
  entry.done = (lanes.get(deps.db) ?? Promise.resolve()).then(run);
  lanes.set(
    deps.db,
    entry.done.catch(() => {}),
  );
  map.set(key, entry);
  return entry.done;
}

/** Removes the least recently used results of `key` (a project, or the whole cache) until it is within `budget`. */
async function trim(deps: BudgetDeps, key: string, budget: number): Promise<void> {
  // What was served lately counts as used before anything is chosen to go.
  await flushTouches(deps);
  for (;;) {
    let total = deps.db
      .selectFrom('image_derivatives')
      .select((eb) => eb.fn.sum<number | string | null>('size').as('bytes'));
    if (key !== WHOLE) total = total.where('project_id', '=', key);
    const bytes = Number((await total.executeTakeFirst())?.bytes ?? 0);
    countsOf(deps.db).set(key, { bytes, at: deps.clock.now().getTime() });
    let over = bytes - budget;
    if (over <= 0) return;
    let oldest = deps.db
      .selectFrom('image_derivatives')
      .select(['id', 'blob_key', 'size', 'project_id'])
      .orderBy('last_used')
      .orderBy('created')
      .limit(EVICT_BATCH);
    if (key !== WHOLE) oldest = oldest.where('project_id', '=', key);
    const drop: CachedRow[] = [];
    for (const row of await oldest.execute()) {
      if (over <= 0) break;
      drop.push(row);
      over -= Number(row.size);
    }
    if (drop.length === 0) return;
    await removeDerivatives(deps, drop);
  }
}

/**
 * Keeps the cache within its budgets after a store into `projectId`: the project's own least
 * recently used results over `budget` go first, then the least recently used of all over the
 * whole cache's budget. Cheap while the counts say both are within (no query).
 */
export async function evictOverBudget(deps: BudgetDeps, projectId: string, budget: number): Promise<void> {
  await pass(deps, projectId, budget);
  await pass(deps, WHOLE, deps.config.imageUrls.cacheBytes);
}
