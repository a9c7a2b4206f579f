import type { ValidateFunction } from 'ajv';
import type { ErrorDetail } from '../errors.js';
import { issueMessage, issuePath } from '../validation-errors.js';
import { TASK_KINDS, type TaskKind } from '../shapes/task-kinds.js';

// A workflow is a tree of steps: `{kind, ref?, folder?, filename?, next?, ...options}`.
// The whole tree is validated when an automation or workflow task is created, and every
// problem is reported with its path (workflow[1].next[0].width).

export interface Step {
  kind: string;
  ref?: string;
  folder?: string;
  filename?: string;
  next?: Step[];
  conditions?: unknown[];
  [option: string]: unknown;
}

/** Kinds a step may have: every task kind but ingest and workflow; `subtitle` is another name for `subtitles`. */
export const STEP_KINDS = TASK_KINDS.filter((k) => k !== 'ingest' && k !== 'workflow');
const ALIASES: Record<string, TaskKind> = { subtitle: 'subtitles' };
const STEP_FIELDS = new Set(['kind', 'ref', 'folder', 'filename', 'next']);
const MAX_STEPS = 100;
const MAX_DEPTH = 10;

export function stepKind(kind: string): TaskKind | undefined {
  const k = ALIASES[kind] ?? kind;
  return (STEP_KINDS as readonly string[]).includes(k) ? (k as TaskKind) : undefined;
}

/** A step's own options: everything but the fields every step has. */
export function stepOptions(step: Step): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(step)) if (!STEP_FIELDS.has(k)) out[k] = v;
  return out;
}

export function stepTarget(step: Step): { ref?: string; folder?: string; filename?: string } {
  return {
    ...(step.ref ? { ref: step.ref } : {}),
    ...(step.folder ? { folder: step.folder } : {}),
    ...(step.filename ? { filename: step.filename } : {}),
  };
}

/** How a step's options are checked: its kind's option schema and cross-field rules (kinds/registry.ts). */
export interface StepCheck {
  validate: ValidateFunction;
  problems?(options: Record<string, unknown>): ErrorDetail[];
}

/** The checks of a step kind; undefined for a kind without an implementation (its step fails when it runs). */
export type StepChecks = (kind: TaskKind) => StepCheck | undefined;

/** Every problem of a workflow tree, each with its path; empty when the tree is valid. */
export function validateWorkflow(workflow: unknown, checks: StepChecks, at = 'workflow'): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  let count = 0;
  const walk = (steps: unknown, path: string, depth: number) => {
    if (!Array.isArray(steps) || steps.length === 0)
      return void problems.push({ field: path, message: 'must be a non-empty array of steps' });
    if (depth > MAX_DEPTH)
      return void problems.push({ field: path, message: `steps may nest at most ${MAX_DEPTH} levels deep` });
    steps.forEach((raw, i) => {
      const where = `${path}[${i}]`;
      if (++count > MAX_STEPS)
        return void (
          count === MAX_STEPS + 1 &&
          problems.push({ field: where, message: `a workflow has at most ${MAX_STEPS} steps` })
        );
      if (!raw || typeof raw !== 'object' || Array.isArray(raw))
        return void problems.push({ field: where, message: 'must be a step object with a kind' });
      const step = raw as Step;
      const kind = typeof step.kind === 'string' ? stepKind(step.kind) : undefined;
      if (!kind)
        return void problems.push({ field: `${where}.kind`, message: `must be one of ${STEP_KINDS.join(', ')}` });
      for (const f of ['ref', 'folder', 'filename'] as const) {
        if (step[f] !== undefined && (typeof step[f] !== 'string' || step[f] === ''))
          problems.push({ field: `${where}.${f}`, message: 'must be a non-empty string' });
      }
      if (step.ref !== undefined && typeof step.ref === 'string' && !/^[A-Za-z0-9_.-]{1,64}$/.test(step.ref))
        problems.push({ field: `${where}.ref`, message: 'may use letters, digits, _ . - (at most 64)' });
      const entry = checks(kind);
      if (entry) {
        const options = stepOptions(step);
        if (!entry.validate(options)) {
          for (const e of entry.validate.errors ?? []) {
            const at = issuePath(e);
            problems.push({ field: at ? `${where}.${at}` : where, message: issueMessage(e) });
          }
        } else {
          for (const p of entry.problems?.(options) ?? [])
            problems.push({ field: `${where}.${p.field}`, message: p.message });
        }
      }
      if (step.next !== undefined) walk(step.next, `${where}.next`, depth + 1);
    });
  };
  walk(workflow, at, 1);
  return problems;
}
