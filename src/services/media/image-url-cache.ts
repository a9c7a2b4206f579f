import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import type { ImageDerivativesTable } from '../../db/schema.js';
import { addUsage } from '../../db/queries/usage.js';
import { compiledOnce } from '../../db/compiled.js';
import { imageCacheBlobKey } from '../../storage/keys.js';
import { evictOverBudget, noteStored, projectBudget, removeDerivatives } from './image-url-budget.js';

// The cache of image-URL results: bytes in the blob store under image-cache/, one row each in
// image_derivatives (what it is, its size, when it was last served). Its budgets, the whole
// cache's and each project's, and the least-recently-used order are in image-url-budget.ts.

type CacheDeps = Pick<Deps, 'db' | 'blobs' | 'clock' | 'config' | 'log' | 'tmpDir'>;

const derivativeById = compiledOnce(
  (db, id: string) => db.selectFrom('image_derivatives').selectAll().where('id', '=', id),
  1,
);

/** A result's row: every request reads it (a hit's one read), so its SQL is compiled once; on this connection. */
export async function findDerivative(deps: Pick<Deps, 'db'>, id: string): Promise<ImageDerivativesTable | undefined> {
  return (await derivativeById({ db: deps.db, reader: null }, id))[0];
}

export { flushTouches, touchDerivative } from './image-url-budget.js';

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
  // Served but not kept when it alone is over the project's budget (which is within the whole cache's).
  const budget = await projectBudget(deps, d.projectId);
  if (d.data.length > budget) return;
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
  noteStored(deps.db, d.projectId, d.data.length);
  await evictOverBudget(deps, d.projectId, budget);
}

/** Deletes the cached results of these source files (the files were deleted). */
export async function dropDerivativesOf(deps: Pick<Deps, 'db' | 'blobs'>, fileIds: string[]): Promise<void> {
  if (fileIds.length === 0) return;
  const rows = await deps.db
    .selectFrom('image_derivatives')
    .select(['id', 'blob_key', 'size', 'project_id'])
    .where('file_id', 'in', fileIds)
    .execute();
  await removeDerivatives(deps, rows);
}

/** Deletes the cached results of a project whose source files are gone (after a file or media deletion). */
export async function dropOrphanDerivatives(deps: Pick<Deps, 'db' | 'blobs'>, projectId: string): Promise<void> {
  const rows = await deps.db
    .selectFrom('image_derivatives')
    .select(['id', 'blob_key', 'size', 'project_id'])
    .where('project_id', '=', projectId)
    .where('file_id', 'not in', deps.db.selectFrom('files').select('id').where('project_id', '=', projectId))
    .execute();
  await removeDerivatives(deps, rows);
}

/** Deletes every cached result of a project (the project is purged). */
export async function dropProjectDerivatives(deps: Pick<Deps, 'db' | 'blobs'>, projectId: string): Promise<void> {
  const rows = await deps.db
    .selectFrom('image_derivatives')
    .select(['id', 'blob_key', 'size', 'project_id'])
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
