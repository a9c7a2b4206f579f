import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addRouteHook, onRoutesWithMethod } from './route-hooks.js';
import { AppError } from '../errors.js';

// The application/json body parser. Fastify's own (secure-json-parse, which refuses __proto__
// and constructor.prototype keys) still parses; around it this refuses what it lets through:
// bytes that are not UTF-8 (decoded silently to U+FFFD), nesting deep enough to overflow the
// stack of whatever walks the value later (storing metadata, the Idempotency-Key fingerprint),
// numbers too large for a double (1e999 parses as Infinity and was stored as null), and the
// character U+0000, which PostgreSQL text cannot store.

/** Objects and arrays nest at most this deep; the body itself is level 1. */
export const MAX_JSON_DEPTH = 64;

/**
 * True when JSON text nests objects and arrays deeper than `limit`. A single pass over the
 * characters that stops at the first level too deep; brackets inside strings do not count.
 * Written by hand because JSON.parse has no depth option and parsing first would build the
 * deep value this exists to refuse.
 */
export function jsonNestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** Only text with a three-digit exponent or a 309-digit run can hold a number beyond a double. */
const MAY_OVERFLOW = /[eE][+]?\d{3}|\d{309}/;
/** JSON text cannot hold a raw U+0000 inside a string, only this escape. */
const MAY_HOLD_NUL = '\\u0000';

export interface ValueProblem {
  /** Where, as `metadata.list[1]` (`body` for the whole body). */
  field: string;
  message: string;
}

const NON_FINITE = 'is a number too large to represent (beyond ±1.8e308); send a finite number';
const NUL = 'contains the character U+0000, which cannot be stored; remove it';

/**
 * Values a parsed body must not hold, by path, in document order: non-finite numbers (1e999
 * parses as Infinity) and, when `nul`, strings or keys with U+0000 (PostgreSQL text cannot
 * hold it: a title with one was a 500 there and stored on SQLite).
 */
export function valueProblems(value: unknown, nul = true): ValueProblem[] {
  const found: ValueProblem[] = [];
  // An explicit stack: the depth is bounded by the check above, but nothing here relies on it.
  // A problem with a name waits on the stack just before its value, to keep document order.
  const stack: ({ value: unknown; path: string } | ValueProblem)[] = [{ value, path: '' }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if ('message' in item) {
      found.push(item);
      continue;
    }
    const v = item.value;
    const field = item.path || 'body';
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) found.push({ field, message: NON_FINITE });
    } else if (typeof v === 'string') {
      if (nul && v.includes('\0')) found.push({ field, message: NUL });
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: `${item.path}[${i}]` });
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i]!;
        const path = item.path ? `${item.path}.${k.replaceAll('\0', '\\u0000')}` : k.replaceAll('\0', '\\u0000');
        stack.push({ value: child, path });
        if (nul && k.includes('\0')) stack.push({ field: path, message: `has a name that ${NUL}` });
      }
    }
  }
  return found;
}

export function registerJsonBodies(app: FastifyInstance, bodyLimit: number): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (req, body: Buffer, done) => {
    if (!isUtf8(body)) {
      done(
        new AppError('invalid_json', 'the request body is not valid UTF-8; send the JSON encoded as UTF-8'),
        undefined,
      );
      return;
    }
    const text = body.toString('utf8');
    if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) {
      done(
        new AppError(
          'invalid_json',
          `the request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep; send a flatter document`,
        ),
        undefined,
      );
      return;
    }
    parseJson(req, text, (err, value) => {
      if (err) return done(err, undefined);
      const nul = text.includes(MAY_HOLD_NUL);
      const details = nul || MAY_OVERFLOW.test(text) ? valueProblems(value, nul) : [];
      if (details.length === 0) return done(null, value);
      done(
        new AppError(
          'validation_failed',
          `the request is not valid: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`,
          { details },
        ),
        undefined,
      );
    });
  });
}

/** In this scope a POST, PATCH or PUT without a body means "no properties", not a type error; and only JSON is spoken (text/plain is a 415). */
export function jsonOnlyScope(scope: FastifyInstance): void {
  scope.removeContentTypeParser(['text/plain']);
  onRoutesWithMethod(scope, ['POST', 'PATCH', 'PUT'], (route) =>
    addRouteHook(route, 'preValidation', async (req: FastifyRequest) => {
      if (req.body === undefined) req.body = {};
    }),
  );
}
