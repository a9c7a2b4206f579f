import type { CompiledQuery, Kysely } from 'kysely';
import type { Database } from './schema.js';
import { readerThread } from './connect.js';

/**
 * A hot query compiled once instead of rebuilt on every request (Kysely's builder and
 * compiler cost more than SQLite's lookup). The builder runs once with marker values; the
 * SQL it produces, correct for the connected dialect, is reused with each call's values put
 * where the markers were. Only for queries whose shape does not depend on the values.
 */
export function compiledOnce<A extends unknown[], R>(build: (db: Kysely<Database>, ...args: A) => { compile(): CompiledQuery<R> }, arity: A['length']) {
  const templates = new WeakMap<Kysely<Database>, { compiled: CompiledQuery<R>; slots: number[] }>();
  return async (db: Kysely<Database>, ...args: A): Promise<R[]> => {
    let t = templates.get(db);
    if (!t) {
      const markers = Array.from({ length: arity }, (_, i) => `\u0000arg${i}\u0000`) as unknown as A;
      const compiled = build(db, ...markers).compile();
      const slots = compiled.parameters.map((p) => (typeof p === 'string' && p.startsWith('\u0000arg') ? Number(p.slice(4, -1)) : -1));
      if (slots.filter((s) => s >= 0).length !== arity) throw new Error('compiledOnce: every argument must appear as a query parameter exactly once');
      t = { compiled, slots };
      templates.set(db, t);
    }
    const { compiled, slots } = t;
    const parameters = compiled.parameters.map((p, i) => (slots[i]! >= 0 ? args[slots[i]!] : p));
    const reader = readerThread(db);
    if (reader?.usable) {
      try {
        return (await reader.query(compiled.sql, parameters)) as R[];
      } catch (err) {
        if (reader.usable) throw err; // the query failed; a failed thread falls back below
      }
    }
    return (await db.executeQuery<R>({ ...compiled, parameters })).rows;
  };
}
