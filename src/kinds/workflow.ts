import { Type } from 'typebox';
import type { ErrorDetail } from '../errors.js';
import { stepKind, stepOptions, validateWorkflow, type Step } from '../workflows/steps.js';
import { defineKind, type StepRefusals } from './define.js';

const isStep = (s: unknown): s is Step =>
  s !== null && typeof s === 'object' && !Array.isArray(s) && typeof (s as { kind?: unknown }).kind === 'string';

/** workflow: its top-level steps run as child tasks; it waits for them (workflows/runner.ts ends it). */
export const workflowKind = defineKind({
  kind: 'workflow',
  // The tree is checked by validateWorkflow (every step's kind and options, with their paths).
  options: Type.Object({ workflow: Type.Array(Type.Unknown()) }, { additionalProperties: false }),
  needsInputFile: true,
  problems: (options, checks) => validateWorkflow(options.workflow, checks),
  stepRefusals: (options, refusals) => walkRefusals(options.workflow, 'workflow', refusals),
  async run(ctx) {
    return { steps: ctx.options.workflow.filter(isStep) };
  },
});

/** Engine refusals of every step of a (validated) tree, `next` steps included. */
export async function walkRefusals(steps: unknown[], at: string, refusals: StepRefusals): Promise<ErrorDetail[]> {
  const out: ErrorDetail[] = [];
  for (const [i, step] of steps.entries()) {
    if (!isStep(step)) continue;
    const kind = stepKind(step.kind);
    if (kind) out.push(...(await refusals(kind, stepOptions(step), `${at}[${i}]`)));
    if (Array.isArray(step.next)) out.push(...(await walkRefusals(step.next, `${at}[${i}].next`, refusals)));
  }
  return out;
}
