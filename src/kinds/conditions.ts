import { Type } from 'typebox';
import { evaluate, isCondition, validateConditions } from '../workflows/conditions.js';
import { defineKind } from './define.js';

/** conditions: checks the media and its file against `conditions`; a workflow runs `next` only when all hold. */
export const conditionsKind = defineKind({
  kind: 'conditions',
  // The items are checked by validateConditions, which automation triggers share and which
  // names each problem (prop, op, value) the same way in both.
  options: Type.Object({ conditions: Type.Array(Type.Unknown()) }, { additionalProperties: false }),
  needsInputFile: true,
  problems: (options) => validateConditions(options.conditions, 'conditions'),
  async run(ctx) {
    const { media, file } = await ctx.describe();
    return { output: null, results: evaluate(ctx.options.conditions.filter(isCondition), { media, file }) };
  },
});
