import { PostgresAdapter, type CompiledQuery, type Kysely } from 'kysely';
import { nameStatement } from './prepared.js';
import type { Database } from './schema.js';
import type { ReaderThread } from './reader.js';
import type { Renderer } from './renderers.js';

/** Where a hot read runs: the SQLite reader thread when there is one, else the database connection. */
export interface ReadHandle {
  db: Kysely<Database>;
  reader: ReaderThread | null;
}

/**
 * A query compiled once per dialect instead of rebuilt on every call (Kysely's builder and
 * compiler cost more than SQLite's lookup, and than a small statement's trip to PostgreSQL);
 * on PostgreSQL it is also a named statement, parsed and planned once per connection (db/prepared.ts).
 * The builder runs once with marker values; the SQL it produces, correct for the connected
 * dialect, is reused with each call's values put where the markers were (an argument may appear
 * several times). Only for queries whose shape does not depend on the values.
 */
export function compiledTemplate<A extends unknown[], R>(
  build: (db: Kysely<Database>, ...args: A) => { compile(): CompiledQuery<R> },
  arity: A['length'],
  naming: { genericPlan?: boolean } = {},
): (db: Kysely<Database>, ...args: A) => CompiledQuery<R> {
  // By adapter: a transaction shares its database's, so the SQL made once serves both.
  const templates = new WeakMap<object, { compiled: CompiledQuery<R>; slots: number[] }>();
  return (db, ...args) => {
    const adapter = db.getExecutor().adapter;
    let t = templates.get(adapter);
    if (!t) {
      const markers = Array.from({ length: arity }, (_, i) => argMarker(i)) as unknown as A;
      const compiled = build(db, ...markers).compile();
      const slots = markerSlots(compiled);
      if (new Set(slots.filter((s) => s >= 0)).size !== arity)
        throw new Error('compiledTemplate: every argument must appear as a query parameter');
      t = { compiled, slots };
      templates.set(adapter, t);
      if (adapter instanceof PostgresAdapter) nameStatement(compiled.sql, naming);
    }
    return withArgs(t.compiled, t.slots, args);
  };
}

/** The value that stands for argument `i` while a template is compiled (no real value holds a NUL). */
export const argMarker = (i: number): string => `\u0000arg${i}\u0000`;

/** For each parameter of a query compiled with markers, the argument it stands for (-1: a value of the query's own). */
export function markerSlots(compiled: CompiledQuery): number[] {
  return compiled.parameters.map((p) =>
    typeof p === 'string' && p.startsWith('\u0000arg') && p.endsWith('\u0000') ? Number(p.slice(4, -1)) : -1,
  );
}

/** The template's query with `args` where its markers were. */
export function withArgs<R>(compiled: CompiledQuery<R>, slots: number[], args: readonly unknown[]): CompiledQuery<R> {
  return { ...compiled, parameters: compiled.parameters.map((p, i) => (slots[i]! >= 0 ? args[slots[i]!] : p)) };
}

/** A hot read compiled once (compiledTemplate), run on the SQLite reader thread where there is one. */
export function compiledOnce<A extends unknown[], R>(
  build: (db: Kysely<Database>, ...args: A) => { compile(): CompiledQuery<R> },
  arity: A['length'],
) {
  const withValues = compiledTemplate(build, arity);

  /** The rows. */
  const read = (h: ReadHandle, ...args: A): Promise<R[]> =>
    viaReader(
      h,
      withValues(h.db, ...args),
      (reader, q) => reader.query(q.sql, q.parameters) as Promise<R[]>,
      (rows) => rows,
    );

  /** The rows as JSON text made by a renderer of db/renderers.ts, on the reader thread where there is one. */
  const rendered = <Arg>(h: ReadHandle, renderer: Renderer<R, Arg>, arg: Arg, ...args: A): Promise<string> =>
    viaReader(
      h,
      withValues(h.db, ...args),
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
