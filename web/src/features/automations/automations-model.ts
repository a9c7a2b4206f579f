import type { ErrorDetail } from '../../lib/api/client';
import type { Body, Data } from '../../lib/api/types';
import { isRecord } from '../../lib/guards';

// The automation builder's model: the body PUT/POST /automations take, its workflow as a tree of
// steps addressed by index paths ([1, 0] is `workflow[1].next[0]`, as the API names it), edits that
// return a new tree, the JSON view's parser, and the API's validation details grouped by step.

export type Automation = Data<'/automations/{id}', 'get'>;
export type Draft = Body<'/automations', 'post'>;
export type Step = Record<string, unknown>;
export type StepPath = number[];
export interface Condition {
  prop: string;
  op?: string;
  value?: unknown;
}

export const TRIGGER_EVENTS = [
  'media.created',
  'media.updated',
  'file.created',
  'file.playable',
  'task.completed',
  'task.failed',
  'task.cancelled',
] as const;

/** The operators a condition takes (src/workflows conditions); none means equality. */
export const OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'contains', 'exists'] as const;
/** What a condition's prop can name (docs/automations.md, "Conditions"). */
export const PROPS = [
  'kind',
  'width',
  'height',
  'duration',
  'title',
  'file.type',
  'file.format',
  'file.filesize',
  'metadata.',
];

export function emptyDraft(): Draft {
  return {
    name: 'New automation',
    description: null,
    trigger: { kind: 'event', event: 'media.created' },
    workflow: [],
    status: 'paused',
  };
}

export function draftOf(a: Automation): Draft {
  const parsed = parseDraft({
    name: a.name ?? null,
    description: a.description ?? null,
    trigger: a.trigger,
    workflow: a.workflow,
    status: a.status,
  });
  return typeof parsed === 'string' ? emptyDraft() : parsed;
}

/** The JSON view's text as a draft, or what is wrong with it. */
export function parseDraft(v: unknown): Draft | string {
  if (!isRecord(v)) return 'The automation must be a JSON object.';
  const { name, description, trigger, workflow, status } = v;
  if (name !== undefined && name !== null && typeof name !== 'string') return '"name" must be a string.';
  if (description !== undefined && description !== null && typeof description !== 'string')
    return '"description" must be a string.';
  if (!isRecord(trigger)) return '"trigger" must be an object.';
  if (typeof trigger.kind !== 'string' || typeof trigger.event !== 'string')
    return '"trigger" needs a "kind" and an "event" (strings).';
  if (trigger.conditions !== undefined && !Array.isArray(trigger.conditions))
    return '"trigger.conditions" must be an array.';
  if (!Array.isArray(workflow)) return '"workflow" must be an array of steps.';
  if (!workflow.every(isRecord)) return 'Every step of "workflow" must be an object.';
  if (status !== undefined && status !== 'active' && status !== 'paused')
    return '"status" must be "active" or "paused".';
  const unknownKeys = Object.keys(v).filter(
    (k) => !['name', 'description', 'trigger', 'workflow', 'status'].includes(k),
  );
  if (unknownKeys.length > 0) return `Unknown key ${unknownKeys.map((k) => `"${k}"`).join(', ')}.`;
  return {
    ...(name !== undefined ? { name } : {}),
    ...(description !== undefined ? { description } : {}),
    trigger: {
      kind: trigger.kind,
      event: trigger.event,
      ...(trigger.conditions !== undefined ? { conditions: trigger.conditions } : {}),
    },
    workflow,
    ...(status !== undefined ? { status } : {}),
  };
}

export const toJson = (d: Draft): string => JSON.stringify(d, null, 2);

export function stepsOf(list: unknown): Step[] {
  return Array.isArray(list) ? list.filter(isRecord) : [];
}

export function countSteps(list: unknown): number {
  return stepsOf(list).reduce((n, s) => n + 1 + countSteps(s.next), 0);
}

/** `workflow[1].next[0]` for [1, 0]. */
export const pathName = (path: StepPath): string =>
  path.map((i, depth) => (depth === 0 ? `workflow[${i}]` : `next[${i}]`)).join('.');

/** "1.2" for [0, 1]: the number a person reads. */
export const stepNumber = (path: StepPath): string => path.map((i) => i + 1).join('.');

/** The list that holds the step at `path` changed by `change` (a new tree; the rest shared). */
function editList(list: Step[], parent: StepPath, change: (siblings: Step[]) => Step[]): Step[] {
  if (parent.length === 0) return change(list);
  const [head, ...rest] = parent;
  return list.map((s, i) => (i === head ? withNext(s, editList(stepsOf(s.next), rest, change)) : s));
}

function withNext(step: Step, next: Step[]): Step {
  const out: Step = { ...step };
  if (next.length > 0) out.next = next;
  else delete out.next;
  return out;
}

export function replaceStep(list: Step[], path: StepPath, step: Step): Step[] {
  const i = path[path.length - 1] ?? 0;
  return editList(list, path.slice(0, -1), (siblings) => siblings.map((s, j) => (j === i ? step : s)));
}

export function removeStep(list: Step[], path: StepPath): Step[] {
  const i = path[path.length - 1] ?? 0;
  return editList(list, path.slice(0, -1), (siblings) => siblings.filter((_, j) => j !== i));
}

export function moveStep(list: Step[], path: StepPath, by: -1 | 1): Step[] {
  const i = path[path.length - 1] ?? 0;
  return editList(list, path.slice(0, -1), (siblings) => {
    const j = i + by;
    if (j < 0 || j >= siblings.length) return siblings;
    const out = [...siblings];
    const a = out[i];
    const b = out[j];
    if (!a || !b) return siblings;
    out[i] = b;
    out[j] = a;
    return out;
  });
}

/** Adds a step at the end of the list under `parent` ([] is the top level). */
export function addStep(list: Step[], parent: StepPath, step: Step): Step[] {
  return editList(list, parent, (siblings) => [...siblings, step]);
}

/** A condition's value as typed: numbers and booleans as such, JSON arrays/objects parsed, else text. */
export function parseValue(text: string): unknown {
  const t = text.trim();
  if (t === '') return undefined;
  if (t === 'true') return true;
  if (t === 'false') return false;
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  if (t.startsWith('[') || t.startsWith('{')) {
    try {
      return JSON.parse(t);
    } catch {
      return text;
    }
  }
  return text;
}

export const formatValue = (v: unknown): string =>
  v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);

export function conditionsOf(list: unknown): Condition[] {
  if (!Array.isArray(list)) return [];
  return list.filter(isRecord).map((c) => ({
    prop: typeof c.prop === 'string' ? c.prop : '',
    ...(typeof c.op === 'string' ? { op: c.op } : {}),
    ...(c.value !== undefined ? { value: c.value } : {}),
  }));
}

/** The API's validation details by field, without the `body.` prefix some carry. */
export function errorsByField(details: ErrorDetail[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of details) {
    const field = d.field.replace(/^body\./, '');
    out[field] = out[field] ? `${out[field]}; ${d.message}` : d.message;
  }
  return out;
}

/**
 * The errors that belong to the step at `name` (`workflow[1].next[0]`), by the field inside it
 * (`width`, `conditions[0].prop`, or '' for the step itself); its next steps' errors are theirs.
 */
export function errorsOfStep(errors: Record<string, string>, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, message] of Object.entries(errors)) {
    if (field === name) out[''] = message;
    else if (field.startsWith(`${name}.`)) {
      const rest = field.slice(name.length + 1);
      if (!/^next\[\d+\]/.test(rest)) out[rest] = message;
    }
  }
  return out;
}

/** Errors under `prefix.` with the prefix removed (e.g. `conditions[0].prop` → `[0].prop` for 'conditions'). */
export function errorsUnder(errors: Record<string, string>, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, message] of Object.entries(errors))
    if (field === prefix || field.startsWith(`${prefix}.`) || field.startsWith(`${prefix}[`))
      out[field.slice(prefix.length)] = message;
  return out;
}
