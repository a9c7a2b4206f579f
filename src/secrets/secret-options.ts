import { isSealed, REDACTED } from './sealer.js';

// Where secrets live in what clients send: the values of an http task's `headers`, and of every
// http step's `headers` in a workflow tree (a workflow task's `workflow`, an automation's
// workflow, a step's `next`). One walker finds them, so sealing on the way in, revealing for the
// request, redacting on the way out and carrying them across an edit all agree on the places.

type Json = Record<string, unknown>;
/** What to do with one secret value; `at` names it (`workflow[0].next[1].headers.Authorization`). */
export type SecretFn = (value: string, at: string) => string;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The kinds whose own options hold secrets: their `headers` values. */
const HEADER_KINDS: ReadonlySet<string> = new Set(['http']);

function mapHeaders(headers: unknown, fn: SecretFn, at: string): unknown {
  if (!isObject(headers)) return headers;
  const out: Json = {};
  for (const [name, value] of Object.entries(headers))
    out[name] = typeof value === 'string' ? fn(value, `${at}.${name}`) : value;
  return out;
}

/** A workflow tree (an array of steps) with fn applied to every secret of its steps, at every depth. */
export function mapStepSecrets(steps: unknown, fn: SecretFn, at = 'workflow'): unknown {
  if (!Array.isArray(steps)) return steps;
  return steps.map((step, i) => {
    if (!isObject(step)) return step;
    const where = `${at}[${i}]`;
    const out: Json = { ...step };
    if (typeof step.kind === 'string' && HEADER_KINDS.has(step.kind) && 'headers' in step)
      out.headers = mapHeaders(step.headers, fn, `${where}.headers`);
    if ('next' in step) out.next = mapStepSecrets(step.next, fn, `${where}.next`);
    return out;
  });
}

/**
 * A task's options with fn applied to every secret: its own headers (http) and, with `steps`, the
 * secrets of the workflow it runs. The worker reveals only a task's own secrets (steps: false), so
 * a workflow's steps are stored sealed again as its child tasks.
 */
export function mapTaskSecrets(kind: string, options: Json, fn: SecretFn, { steps = true } = {}): Json {
  let out = options;
  if (HEADER_KINDS.has(kind) && 'headers' in options)
    out = { ...out, headers: mapHeaders(options.headers, fn, 'headers') };
  if (steps && kind === 'workflow' && 'workflow' in options)
    out = { ...out, workflow: mapStepSecrets(options.workflow, fn) };
  return out;
}

/** Whether stored JSON text may hold a secret: a cheap test before parsing and walking it. */
export function mayHoldSecrets(json: string): boolean {
  return json.includes('"headers"');
}

/** Any value with every sealed token in it shown as REDACTED (what answers, events and webhooks carry). */
export function redactSealed<T>(value: T): T {
  if (isSealed(value)) return REDACTED as T;
  if (Array.isArray(value)) return value.map(redactSealed) as T;
  if (isObject(value)) {
    const out: Json = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactSealed(v);
    return out as T;
  }
  return value;
}

/**
 * A workflow sent back after it was read (an automation's PUT or PATCH): each REDACTED header
 * value keeps the sealed value of the same header of the step at the same place before the edit.
 * What cannot be carried (no such step or header before) is left REDACTED for the caller to refuse.
 */
export function carrySealed(next: unknown, before: unknown): unknown {
  const sealedAt = new Map<string, string>();
  mapStepSecrets(before, (value, at) => {
    if (isSealed(value)) sealedAt.set(at.toLowerCase(), value);
    return value;
  });
  return mapStepSecrets(next, (value, at) => (value === REDACTED ? (sealedAt.get(at.toLowerCase()) ?? value) : value));
}

/** The places of a workflow whose header value is still REDACTED (sent back without a value to keep). */
export function redactedPlaces(steps: unknown): string[] {
  const places: string[] = [];
  mapStepSecrets(steps, (value, at) => {
    if (value === REDACTED) places.push(at);
    return value;
  });
  return places;
}

/**
 * A stored snapshot (a task or an automation as answers showed it, or an event or a webhook body
 * around one) with its secret values REDACTED: how an earlier mediad's plain copies are cleaned.
 */
export function redactSnapshot(value: unknown): unknown {
  if (!isObject(value)) return value;
  const redact = () => REDACTED;
  if (value.object === 'task' && typeof value.kind === 'string' && isObject(value.options))
    return { ...value, options: mapTaskSecrets(value.kind, value.options, redact) };
  if (value.object === 'automation') return { ...value, workflow: mapStepSecrets(value.workflow, redact) };
  if (value.object === 'event') return { ...value, data: redactSnapshot(value.data) };
  return value;
}
