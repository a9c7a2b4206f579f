import type { CompiledQuery, Kysely } from 'kysely';
import { argMarker, markerSlots, withArgs } from './compiled.js';
import type { Database } from './schema.js';

// A statement whose number of rows varies (a transaction's held-back writes, db/transact.ts) cannot
// be one compiledTemplate, so Kysely built and compiled it again at every call: on SQLite a tenth
// of the server's main thread during small tasks (perf, 2026-12-02). Here it is compiled once per
// shape of its values (their keys, the lengths, which are null), and the values are put in by position.

/** Values with their strings, numbers and booleans replaced by markers numbered from `first`; those values in order; their shape. */
export interface Marked<A> {
  marked: A;
  leaves: unknown[];
  shape: string;
}

const NOT_PLAIN = new Error('not plain values');

/** `value` marked, or null when it holds anything but plain objects, arrays and primitives (a Date, a builder). */
export function markValues<A>(value: A, first = 0): Marked<A> | null {
  const leaves: unknown[] = [];
  const shape: string[] = [];
  const leaf = (v: unknown, type: string) => {
    shape.push(type);
    leaves.push(v);
    return argMarker(first + leaves.length - 1);
  };
  const walk = (v: unknown): unknown => {
    if (v === null || v === undefined) {
      shape.push(v === null ? 'n' : 'u');
      return v;
    }
    switch (typeof v) {
      case 'string':
        return leaf(v, 'S');
      case 'number':
        return leaf(v, 'N');
      case 'boolean':
        return leaf(v, 'B');
      case 'bigint':
        return leaf(v, 'G');
      case 'object': {
        if (Array.isArray(v)) {
          shape.push(`[${v.length}`);
          return v.map(walk);
        }
        const proto: unknown = Object.getPrototypeOf(v);
        if (proto !== Object.prototype && proto !== null) throw NOT_PLAIN;
        const out: Record<string, unknown> = {};
        shape.push('{');
        for (const [k, x] of Object.entries(v)) {
          shape.push(JSON.stringify(k));
          out[k] = walk(x);
        }
        shape.push('}');
        return out;
      }
      default:
        throw NOT_PLAIN;
    }
  };
  try {
    // The markers stand for the values while the template is built, as compiledTemplate's do.
    const marked = walk(value) as A;
    return { marked, leaves, shape: shape.join(' ') };
  } catch (err) {
    if (err === NOT_PLAIN) return null;
    throw err;
  }
}

interface Template {
  compiled: CompiledQuery;
  slots: number[];
}

/** At most this many shapes a statement and dialect; a rarer one is built every time. */
const MAX_SHAPES = 256;

/**
 * Statements compiled once per key (the shape of their values) and dialect. The builders must use
 * the values only as the statement's values, never in its logic: the first compilation of each key
 * checks that the template gives back the SQL and parameters of the real values, and a key that
 * fails the check is built every time.
 */
export class ShapeTemplates {
  readonly #byAdapter = new WeakMap<object, Map<string, Template | null>>();

  compile(
    db: Kysely<Database>,
    key: string,
    leaves: unknown[],
    marked: () => CompiledQuery,
    real: () => CompiledQuery,
  ): CompiledQuery {
    const adapter = db.getExecutor().adapter;
    let templates = this.#byAdapter.get(adapter);
    if (!templates) this.#byAdapter.set(adapter, (templates = new Map()));
    const t = templates.get(key);
    if (t) return withArgs(t.compiled, t.slots, leaves);
    const compiled = real();
    if (t === undefined && templates.size < MAX_SHAPES) templates.set(key, templateFor(marked(), leaves, compiled));
    return compiled;
  }
}

/** The query compiled with markers, or null when it does not give `real` back from `leaves`. */
function templateFor(compiled: CompiledQuery, leaves: unknown[], real: CompiledQuery): Template | null {
  if (compiled.sql !== real.sql || compiled.sql.includes('\u0000')) return null;
  const slots = markerSlots(compiled);
  const again = withArgs(compiled, slots, leaves).parameters;
  if (again.length !== real.parameters.length || again.some((p, i) => !Object.is(p, real.parameters[i]))) return null;
  return { compiled, slots };
}
