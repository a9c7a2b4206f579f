import type { Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import { iso } from '../deps.js';
import type { Database, TasksTable } from '../db/schema.js';
import { parseChain, recordEvent } from '../db/queries/events.js';
import { toTaskObject } from '../services/task-representation.js';
import type { TaskFailure } from './retry.js';
import { enqueueTaskWebhook } from '../webhooks/task-webhook.js';
import { advanceWorkflow } from '../workflows/runner.js';

/** Thrown inside a completion transaction when the task is no longer ours: the transaction rolls back. */
export class LeaseLostError extends Error {
  constructor(id: string) {
    super(`task ${id} is no longer leased by this worker (cancelled, or its lease expired)`);
    this.name = 'LeaseLostError';
  }
}

/** Marks the task completed with its output, its event and webhook, in the caller's transaction. */
export async function completeTask(deps: Pick<Deps, 'clock'>, trx: Kysely<Database>, task: TasksTable, outputFileId: string | null, output: unknown, results?: unknown): Promise<void> {
  const now = iso(deps.clock.now());
  const res = await trx.updateTable('tasks')
    .set({
      status: 'completed', output: output === null ? null : JSON.stringify(output), output_file_id: outputFileId, results: results === undefined ? null : JSON.stringify(results),
      progress: 100, error: null, lease_owner: null, lease_expires: null, finished: now, updated: now,
    })
    .where('id', '=', task.id).where('status', '=', 'processing').where('lease_owner', '=', task.lease_owner)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) throw new LeaseLostError(task.id);
  const row = await trx.selectFrom('tasks').selectAll().where('id', '=', task.id).executeTakeFirstOrThrow();
  await recordEvent(trx, task.project_id, 'task.completed', toTaskObject(row), now, parseChain(row.chain));
  await enqueueTaskWebhook(trx, row, 'task.completed', now);
  await advanceWorkflow(deps, trx, row);
}

/** Records a permanent failure (or the last attempt's). Returns false when the task was not ours any more. */
export async function failTask(deps: Pick<Deps, 'db' | 'clock'>, task: TasksTable, failure: TaskFailure): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    const now = iso(deps.clock.now());
    const res = await trx.updateTable('tasks')
      .set({ status: 'failed', error: JSON.stringify({ code: failure.code, message: failure.message }), lease_owner: null, lease_expires: null, finished: now, updated: now })
      .where('id', '=', task.id).where('status', '=', 'processing')
      .where('lease_owner', task.lease_owner === null ? 'is' : '=', task.lease_owner)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return false;
    const row = await trx.selectFrom('tasks').selectAll().where('id', '=', task.id).executeTakeFirstOrThrow();
    await recordEvent(trx, task.project_id, 'task.failed', toTaskObject(row), now, parseChain(row.chain));
    await enqueueTaskWebhook(trx, row, 'task.failed', now);
    await advanceWorkflow(deps, trx, row);
    return true;
  });
}
