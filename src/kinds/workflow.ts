import { Type } from 'typebox';
import { iso } from '../deps.js';
import { LeaseLostError } from '../queue/finish.js';
import { startSteps } from '../workflows/runner.js';
import { validateWorkflow, type Step } from '../workflows/steps.js';
import type { KindProcessor } from './types.js';

/** workflow: starts its top-level steps as child tasks and waits for them (the runner ends it). */
export const workflowKind: KindProcessor = {
  kind: 'workflow',
  options: Type.Object({ workflow: Type.Array(Type.Unknown()) }, { additionalProperties: false }),
  policy: { maxAttempts: 3, backoffMs: 1_000, timeoutMs: 5 * 60_000 },
  needsInputFile: true,
  problems: (options) => validateWorkflow(options.workflow),
  async run(ctx, input) {
    const steps = ctx.options.workflow as Step[];
    return {
      commit: () => ctx.deps.db.transaction().execute(async (trx) => {
        const now = iso(ctx.deps.clock.now());
        const res = await trx.updateTable('tasks').set({ status: 'waiting', lease_owner: null, lease_expires: null, progress: 0, updated: now })
          .where('id', '=', ctx.task.id).where('status', '=', 'processing').where('lease_owner', '=', ctx.task.lease_owner).executeTakeFirst();
        if (Number(res.numUpdatedRows) === 0) throw new LeaseLostError(ctx.task.id);
        const parent = await trx.selectFrom('tasks').selectAll().where('id', '=', ctx.task.id).executeTakeFirstOrThrow();
        await startSteps(ctx.deps, trx, parent, steps, input!.file.id, parent.input);
      }),
    };
  },
};
