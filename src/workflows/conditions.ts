import type { ErrorDetail } from '../errors.js';
import { CONDITION_OPS, type Condition, type ConditionOp } from '../shapes/conditions.js';

// Conditions of workflow steps and automation triggers (reference.md Decisions 7):
// `{prop, value, op?}`, all must hold. Equality by default (strings case-insensitively,
// numbers numerically); `op` adds thresholds. Pure: the caller supplies the subject.

export { CONDITION_OPS, type Condition, type ConditionOp };

/** What props are read from: media fields, `file.<field>` (the input file), `metadata.<key>` (the media's). */
export interface ConditionSubject {
  media: object | null;
  file: object | null;
}

export interface ConditionResults {
  passed: Condition[];
  failed: Condition[];
  continue: boolean;
}

export function resolveProp(subject: ConditionSubject, prop: string): unknown {
  const [head, ...rest] = prop.split('.');
  let base: unknown;
  let path = rest;
  if (head === 'file') base = subject.file;
  else if (head === 'metadata') base = field(subject.media, 'metadata');
  else if (head === 'media') base = subject.media;
  else {
    base = subject.media;
    path = [head!, ...rest];
  }
  for (const key of path) base = field(base, key);
  return base;
}

/** An own property of an object; undefined for anything else. */
function field(base: unknown, key: string): unknown {
  if (base === null || typeof base !== 'object' || !Object.hasOwn(base, key)) return undefined;
  return (base as Record<string, unknown>)[key];
}

const asNumber = (v: unknown): number | null => {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) return Number(v);
  return null;
};

function equal(actual: unknown, expected: unknown): boolean {
  const a = asNumber(actual);
  const e = asNumber(expected);
  if (a !== null && e !== null) return a === e;
  if (typeof actual === 'string' && typeof expected === 'string')
    return actual.toLowerCase() === expected.toLowerCase();
  if (typeof actual === 'boolean' || typeof expected === 'boolean') return String(actual) === String(expected);
  return actual === expected;
}

function compare(actual: unknown, expected: unknown, test: (a: number, e: number) => boolean): boolean {
  const a = asNumber(actual);
  const e = asNumber(expected);
  return a !== null && e !== null && test(a, e);
}

export function holds(c: Condition, subject: ConditionSubject): boolean {
  const actual = resolveProp(subject, c.prop);
  switch (c.op ?? 'eq') {
    case 'eq':
      return equal(actual, c.value);
    case 'ne':
      return !equal(actual, c.value);
    case 'gt':
      return compare(actual, c.value, (a, e) => a > e);
    case 'gte':
      return compare(actual, c.value, (a, e) => a >= e);
    case 'lt':
      return compare(actual, c.value, (a, e) => a < e);
    case 'lte':
      return compare(actual, c.value, (a, e) => a <= e);
    case 'in': {
      const options = Array.isArray(c.value)
        ? c.value
        : String(c.value ?? '')
            .split(',')
            .map((s) => s.trim());
      return options.some((o) => equal(actual, o));
    }
    case 'contains':
      if (Array.isArray(actual)) return actual.some((x) => equal(x, c.value));
      return (
        typeof actual === 'string' &&
        typeof c.value === 'string' &&
        actual.toLowerCase().includes(c.value.toLowerCase())
      );
    case 'exists':
      return (
        (actual !== undefined && actual !== null) ===
        (c.value === undefined ? true : c.value === true || c.value === 'true')
      );
  }
}

export function evaluate(conditions: Condition[], subject: ConditionSubject): ConditionResults {
  const passed: Condition[] = [];
  const failed: Condition[] = [];
  for (const c of conditions) (holds(c, subject) ? passed : failed).push(c);
  return { passed, failed, continue: failed.length === 0 };
}

/** Every problem of a list of conditions, each with its path (`trigger.conditions[0].op`); empty when valid. */
export function validateConditions(list: unknown, at: string): ErrorDetail[] {
  if (!Array.isArray(list) || list.length === 0)
    return [{ field: at, message: 'must be a non-empty array of {prop, value, op?}' }];
  const problems: ErrorDetail[] = [];
  list.forEach((c, i) => {
    const where = `${at}[${i}]`;
    if (!c || typeof c !== 'object' || Array.isArray(c))
      return void problems.push({ field: where, message: 'must be an object {prop, value, op?}' });
    const { prop, op, ...rest } = c as Record<string, unknown>;
    if (typeof prop !== 'string' || prop.length === 0)
      problems.push({ field: `${where}.prop`, message: 'must be a non-empty string' });
    if (op !== undefined && !(CONDITION_OPS as readonly unknown[]).includes(op))
      problems.push({ field: `${where}.op`, message: `must be one of ${CONDITION_OPS.join(', ')}` });
    if (op !== 'exists' && !('value' in rest)) problems.push({ field: `${where}.value`, message: 'is required' });
    for (const k of Object.keys(rest))
      if (k !== 'value') problems.push({ field: `${where}.${k}`, message: 'is not a known property' });
  });
  return problems;
}

/** A valid condition (what validateConditions accepts), as a type guard. */
export function isCondition(c: unknown): c is Condition {
  return c !== null && typeof c === 'object' && !Array.isArray(c) && validateConditions([c], 'c').length === 0;
}
