import type { SelectQueryBuilder } from 'kysely';
import type { Database } from './schema.js';

export interface PageRequest {
  page: number;
  limit: number;
}

export interface Page<T> extends PageRequest {
  items: T[];
  total: number;
}

/**
 * One page of a list and its exact total. `filtered` holds the FROM and WHERE; `select` adds the
 * columns and the order. The total is counted from `filtered` unless a kept counter (db/queries/
 * counters.ts, exact and cheaper than a count) is given.
 */
export async function listPage<TB extends keyof Database, O>(
  filtered: SelectQueryBuilder<Database, TB, object>,
  select: (q: SelectQueryBuilder<Database, TB, object>) => SelectQueryBuilder<Database, TB, O>,
  { page, limit }: PageRequest,
  counted?: Promise<number>,
): Promise<Page<O>> {
  const [items, total] = await Promise.all([
    select(filtered)
      .limit(limit)
      .offset((page - 1) * limit)
      .execute(),
    counted ??
      filtered
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
        .then((r) => Number(r.n)),
  ]);
  return { items, total, page, limit };
}

/** The same page with its items turned into what the API shows. */
export function mapPage<A, B>(page: Page<A>, fn: (item: A) => B): Page<B> {
  return { items: page.items.map(fn), total: page.total, page: page.page, limit: page.limit };
}

/** A page of a short list held in memory (a user's organisations, sessions). */
export function arrayPage<T>(all: T[], { page, limit }: PageRequest): Page<T> {
  return { items: all.slice((page - 1) * limit, page * limit), total: all.length, page, limit };
}
