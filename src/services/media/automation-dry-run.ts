import type { Deps } from '../../deps.js';
import { AppError, type ErrorDetail } from '../../errors.js';
import { enginesOf } from '../../kinds/engines.js';
import { engineRefusals, inputKindProblems, kindEntry, stepChecks } from '../../kinds/registry.js';
import type { Trigger } from '../../shapes/automations.js';
import type { FileRow } from '../../shapes/files.js';
import { holds, isCondition, resolveProp, type Condition, type ConditionSubject } from '../../workflows/conditions.js';
import { MEDIA_KINDS } from '../../workflows/runner.js';
import { stepKind, stepOptions, validateWorkflow, type Step } from '../../workflows/steps.js';
import { conditionSubject } from '../../workflows/subject.js';
import { redactSealed } from '../../secrets/secret-options.js';
import { mediaInputFile, triggerHolds } from './automation-runs.js';
import { findMedia } from './media.js';

// POST /automations/{id}/dry-run: what a run of the automation on a media would do, decided by
// the same code a run uses (trigger and step conditions: workflows/conditions.ts; the workflow's
// validation: validateWorkflow with each kind's checks; the input kinds and engines a step needs:
// kinds/registry.ts; which file the steps after a step work on: workflows/runner.ts). It only
// reads: no task, event or file is made. What a run could only learn by running (a condition on
// an earlier step's result, or on a file a step makes) is reported as depending on that step.

export type Decision = 'yes' | 'no' | 'unknown';

export interface DryRunCondition {
  prop: string;
  op: string;
  value?: unknown;
  /** The value the condition compares, when it is known without running anything. */
  actual?: unknown;
  /** null: it depends on an earlier step's output (`depends_on`). */
  passed: boolean | null;
  depends_on?: string;
}

export interface DryRunStep {
  /** Its path in the workflow (`workflow[1].next[0]`), as validation errors name it. */
  path: string;
  /** The step whose `next` it is; null for a top-level step. */
  parent: string | null;
  kind: string;
  /** Whether a run would start it: `unknown` when that depends on an earlier step's output. */
  runs: Decision;
  reason: string;
  /** The file it would work on: the media's file, or the output of an earlier step (`input_from`). */
  input_file_id?: string;
  input_from?: string;
  /** conditions steps: each condition, and whether its `next` steps run. */
  conditions?: DryRunCondition[];
  branch?: 'taken' | 'not_taken' | 'unknown';
  /** Why this step would fail or be refused (validation, input kind, engines), with field paths. */
  problems: ErrorDetail[];
}

export interface DryRun {
  object: 'automation_dry_run';
  automation_id: string;
  /** Whether the automation is active; a dry run decides as if it were. */
  automation_status: string;
  media_id: string;
  file_id: string;
  trigger: { event: string; passed: boolean; conditions: DryRunCondition[] };
  /** Whether the trigger's conditions hold for this media, so a run would start. */
  would_start: boolean;
  steps: DryRunStep[];
  /** Every problem of every step (what POST /automations would refuse now, or a run would fail on). */
  problems: ErrorDetail[];
}

/** What the steps below a step may rely on. */
interface Context {
  reach: Decision;
  reason: string;
  parent: string | null;
  /** The file the steps work on, when known; else the step whose output it is. */
  input: { file: FileRow } | { from: string };
  /** Media metadata keys that earlier steps of this branch write, and which step writes each. */
  annotated: ReadonlyMap<string, string>;
}

/** The step that decides a condition, when the value it reads comes from an earlier step's output. */
function dependsOn(c: Condition, ctx: Context): string | undefined {
  const [head, key] = c.prop.split('.');
  if (head === 'metadata' && key && ctx.annotated.has(key)) return ctx.annotated.get(key);
  if (head === 'file' && 'from' in ctx.input) return ctx.input.from;
  return undefined;
}

function checkCondition(c: Condition, subject: ConditionSubject, ctx: Context): DryRunCondition {
  const base = { prop: c.prop, op: c.op ?? 'eq', ...(c.value !== undefined ? { value: c.value } : {}) };
  const step = dependsOn(c, ctx);
  if (step) return { ...base, passed: null, depends_on: step };
  const actual = resolveProp(subject, c.prop);
  return { ...base, ...(actual !== undefined ? { actual } : {}), passed: holds(c, subject) };
}

const belongsTo = (field: string, path: string) =>
  field === path || (field.startsWith(`${path}.`) && !field.startsWith(`${path}.next[`));

export async function dryRunAutomation(
  deps: Deps,
  scope: { projectId: string },
  automationId: string,
  mediaId: string,
): Promise<DryRun> {
  const automation = await deps.db
    .selectFrom('automations')
    .selectAll()
    .where('project_id', '=', scope.projectId)
    .where('id', '=', automationId)
    .executeTakeFirst();
  if (!automation) throw new AppError('not_found', `no automation ${automationId} in this project`);
  const media = await findMedia(deps.db, scope.projectId, mediaId);
  if (!media) throw new AppError('not_found', `no media ${mediaId} in this project`);
  const file = await mediaInputFile(deps.db, scope.projectId, mediaId);
  if (!file) throw new AppError('conflict', `media ${mediaId} has no file yet; a run would have nothing to work on`);

  const { publicUrl } = deps.config;
  const subject = conditionSubject(publicUrl, media, file);
  const trigger = JSON.parse(automation.trigger) as Trigger;
  // Header values stay sealed (shown REDACTED): a dry run checks the workflow's shape, not secrets.
  const workflow = redactSealed(JSON.parse(automation.workflow) as unknown[]);
  const noDeps: Context = { reach: 'yes', reason: '', parent: null, input: { file }, annotated: new Map() };
  const triggerConditions = (trigger.conditions ?? []).map((c) => checkCondition(c, subject, noDeps));
  const started = triggerHolds(trigger, subject);

  // The checks POST /automations makes, against the stored workflow (mediad may have changed since).
  const problems = validateWorkflow(workflow, stepChecks);
  if (problems.length === 0)
    problems.push(...(await engineRefusals(kindEntry('workflow')!, { workflow }, () => enginesOf(deps.config))));

  const steps: DryRunStep[] = [];
  const walk = (list: unknown[], at: string, ctx: Context) => {
    list.forEach((raw, i) => {
      const path = `${at}[${i}]`;
      if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return;
      const step = raw as Step;
      const kind = typeof step.kind === 'string' ? stepKind(step.kind) : undefined;
      const own = problems.filter((p) => belongsTo(p.field, path));
      const entry = kind ? kindEntry(kind) : undefined;
      if (entry && 'file' in ctx.input)
        for (const p of inputKindProblems(entry, stepOptions(step), ctx.input.file.kind)) {
          const problem = { field: `${path}.kind`, message: p.message };
          own.push(problem);
          problems.push(problem);
        }
      const out: DryRunStep = {
        path,
        parent: ctx.parent,
        kind: String(step.kind),
        runs: ctx.reach,
        reason:
          ctx.reach === 'yes'
            ? ctx.parent
              ? `${ctx.parent} completes first`
              : 'a top-level step: it starts with the run'
            : ctx.reason,
        ...('file' in ctx.input ? { input_file_id: ctx.input.file.id } : { input_from: ctx.input.from }),
        problems: own,
      };
      let next: Decision = ctx.reach;
      let reason = ctx.reason;
      if (own.length > 0 && ctx.reach !== 'no') {
        out.reason = `${out.reason}; it would fail: ${own.map((p) => p.message).join('; ')}`;
        next = 'no';
        reason = `${path} would fail, so its next steps would not start`;
      }
      if (kind === 'conditions' && Array.isArray(step.conditions)) {
        const checked = step.conditions.filter(isCondition).map((c) => checkCondition(c, subject, ctx));
        out.conditions = checked;
        const branch = checked.some((c) => c.passed === false)
          ? 'not_taken'
          : checked.every((c) => c.passed === true)
            ? 'taken'
            : 'unknown';
        out.branch = branch;
        if (branch === 'not_taken' && next !== 'no') {
          next = 'no';
          const failed = checked.filter((c) => c.passed === false).map((c) => c.prop);
          reason = `the conditions of ${path} do not hold (${failed.join(', ')})`;
        } else if (branch === 'unknown' && next === 'yes') {
          next = 'unknown';
          const on = [...new Set(checked.filter((c) => c.passed === null).map((c) => c.depends_on))];
          reason = `the conditions of ${path} depend on ${on.map((s) => `${s}'s output`).join(' and ')}`;
        }
      }
      steps.push(out);
      if (!Array.isArray(step.next) || step.next.length === 0) return;
      const annotated = new Map(ctx.annotated);
      if (entry?.annotates) annotated.set(entry.annotates, path);
      walk(step.next, `${path}.next`, {
        reach: next,
        reason,
        parent: path,
        // Steps after a video, image or audio step work on the file it makes; after others, on the same input.
        input: kind && MEDIA_KINDS.has(kind) ? { from: path } : ctx.input,
        annotated,
      });
    });
  };
  walk(
    workflow,
    'workflow',
    started
      ? noDeps
      : { ...noDeps, reach: 'no', reason: 'the trigger’s conditions do not hold for this media: no run starts' },
  );

  return {
    object: 'automation_dry_run',
    automation_id: automation.id,
    automation_status: automation.status,
    media_id: mediaId,
    file_id: file.id,
    trigger: { event: trigger.event, passed: started, conditions: triggerConditions },
    would_start: started,
    steps,
    problems,
  };
}
