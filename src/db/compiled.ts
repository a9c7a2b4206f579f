import type { CompiledQuery, Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { ReaderThread } from './reader.js';
import type { Renderer } from './renderers.js';

/** Where a hot read runs: the SQLite reader thread when there is one, else the database connection. */
export interface ReadHandle {
  db: Kysely<Database>;
  reader: ReaderThread | null;
}

/**
 * A hot query compiled once instead of rebuilt on every request (Kysely's builder and
 * compiler cost more than SQLite's lookup). The builder runs once with marker values; the
 * SQL it produces, correct for the connected dialect, is reused with each call's values put
 * where the markers were. Only for queries whose shape does not depend on the values.
 */
export function compiledOnce<A extends unknown[], R>(
  build: (db: Kysely<Database>, ...args: A) => { compile(): CompiledQuery<R> },
  arity: A['length'],
) {
  const templates = new WeakMap<Kysely<Database>, { compiled: CompiledQuery<R>; slots: number[] }>();
  const withValues = (db: Kysely<Database>, args: A): CompiledQuery<R> => {
    let t = templates.get(db);
    if (!t) {
      const markers = Array.from({ length: arity }, (_, i) => `\u0000arg${i}\u0000`) as unknown as A;
      const compiled = build(db, ...markers).compile();
      const slots = compiled.parameters.map((p) =>
        typeof p === 'string' && p.startsWith('\u0000arg') ? Number(p.slice(4, -1)) : -1,
      );
      if (slots.filter((s) => s >= 0).length !== arity)
        throw new Error('compiledOnce: every argument must appear as a query parameter exactly once');
      t = { compiled, slots };
      templates.set(db, t);
    }
    const { compiled, slots } = t;
    return { ...compiled, parameters: compiled.parameters.map((p, i) => (slots[i]! >= 0 ? args[slots[i]!] : p)) };
  };

  /** The rows. */
  const read = (h: ReadHandle, ...args: A): Promise<R[]> =>
    viaReader(
      h,
      withValues(h.db, args),
      (reader, q) => reader.query(q.sql, q.parameters) as Promise<R[]>,
      (rows) => rows,
    );

  /** The rows as JSON text made by a renderer of db/renderers.ts, on the reader thread where there is one. */
  const rendered = <Arg>(h: ReadHandle, renderer: Renderer<R, Arg>, arg: Arg, ...args: A): Promise<string> =>
    viaReader(
      h,
      withValues(h.db, args),
      (reader, q) => reader.rendered(q.sql, q.parameters, renderer.name, arg),
      (rows) => renderer.render(arg, rows),
    );

  return Object.assign(read, { rendered });
}

/** A read on the SQLite reader thread where there is one, else (PostgreSQL, in memory, a failed thread) through Kysely, its rows given to `here`. */
async function viaReader<R, T>(
  h: ReadHandle,
  query: CompiledQuery<R>,
  onThread: (reader: ReaderThread, query: CompiledQuery<R>) => Promise<T>,
  here: (rows: R[]) => T,
): Promise<T> {
  if (h.reader?.usable) {
    try {
      return await onThread(h.reader, query);
    } catch (err) {
      // A query that failed fails; a failed thread falls back below.
      if (h.reader.usable) throw err;
    }
  }
  return here((await h.db.executeQuery(query)).rows);
}

/**
 * One compiled query per LIMIT, the LIMIT written into the SQL: SQLite plans a statement whose
 * LIMIT is a bound parameter again every time it runs (12 µs of a 45 µs page read here).
 * Limits are validated integers from 1 to 100, so there are at most a hundred of them.
 */
export function perLimit<Q>(make: (limit: number) => Q): (limit: number) => Q {
  const byLimit = new Map<number, Q>();
  return (limit) => {
    if (!Number.isSafeInteger(limit) || limit < 0) throw new Error(`perLimit: ${limit} is not a limit`);
    let q = byLimit.get(limit);
    if (!q) byLimit.set(limit, (q = make(limit)));
    return q;
  };
}
