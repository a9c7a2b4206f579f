import type { CompiledQuery, Kysely } from 'kysely';
import { argMarker, markerSlots, withArgs } from './compiled.js';
import type { Database } from './schema.js';

// A statement whose number of rows varies (a transaction's held-back writes, db/transact.ts) cannot
// be one compiledTemplate, so Kysely built and compiled it again at every call: on SQLite a tenth
// of the server's main thread during small tasks (perf, 2026-12-02). Here it is compiled once per
// shape of its values (their keys, the lengths, which are null), and the values are put in by position.

/** Values' strings, numbers and booleans in order, their shape, and the values with markers (numbered from `first`) in their place. */
export interface Marked<A> {
  leaves: unknown[];
  shape: string;
  /** Made only when a template is compiled: the markers stand for the values, as compiledTemplate's do. */
  marked(): A;
}

/**
 * `value`'s leaves and shape, or null when it holds anything but plain objects, arrays and
 * primitives (a Date, a builder). Read at every statement, so it allocates no more than it returns.
 */
export function markValues<A>(value: A, first = 0): Marked<A> | null {
  const leaves: unknown[] = [];
  let shape = '';
  const scan = (v: unknown): boolean => {
    if (v === null || v === undefined) {
      shape += v === null ? 'n' : 'u';
      return true;
    }
    switch (typeof v) {
      case 'string':
      case 'number':
      case 'boolean':
      case 'bigint':
        shape += TYPES[typeof v];
        leaves.push(v);
        return true;
      case 'object': {
        if (Array.isArray(v)) {
          shape += `[${v.length}`;
          for (const x of v) if (!scan(x)) return false;
          return true;
        }
        if (!isPlain(v)) return false;
        shape += '{';
        for (const k in v) {
          // The key's length first: no key can be read as another's end and the next one's start.
          shape += `${k.length}:${k}`;
          const x: unknown = Reflect.get(v, k);
          if (!scan(x)) return false;
        }
        shape += '}';
        return true;
      }
      default:
        return false;
    }
  };
  if (!scan(value)) return null;
  const marked = (): A => {
    let n = first;
    const mark = (v: unknown): unknown => {
      if (v === null || typeof v !== 'object') return v === undefined || v === null ? v : argMarker(n++);
      if (Array.isArray(v)) return v.map(mark);
      const out: Record<string, unknown> = {};
      for (const k in v) out[k] = mark(Reflect.get(v, k));
      return out;
    };
    return mark(value) as A;
  };
  return { leaves, shape, marked };
}

const TYPES: Record<string, string> = { string: 'S', number: 'N', boolean: 'B', bigint: 'G' };
const isPlain = (v: object) => {
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

interface Template {
  compiled: CompiledQuery;
  slots: number[];
}

/** At most this many shapes a dialect (a transaction's held-back writes take a few dozen); a rarer one is built every time. */
const MAX_SHAPES = 1024;

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
