import { Type } from 'typebox';
import { validateWorkflow, type Step } from '../workflows/steps.js';
import { defineKind } from './define.js';

const isStep = (s: unknown): s is Step =>
  s !== null && typeof s === 'object' && !Array.isArray(s) && typeof (s as { kind?: unknown }).kind === 'string';

/** workflow: its top-level steps run as child tasks; it waits for them (workflows/runner.ts ends it). */
export const workflowKind = defineKind({
  kind: 'workflow',
  // The tree is checked by validateWorkflow (every step's kind and options, with their paths).
  options: Type.Object({ workflow: Type.Array(Type.Unknown()) }, { additionalProperties: false }),
  needsInputFile: true,
  problems: (options, checks) => validateWorkflow(options.workflow, checks),
  async run(ctx) {
    return { steps: ctx.options.workflow.filter(isStep) };
  },
});
