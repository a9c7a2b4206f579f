import { SqliteAdapter, type Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import { iso } from '../deps.js';
import type { Database, TasksTable } from '../db/schema.js';
import { parseChain, recordEvent } from '../db/queries/events.js';
import { toTaskObject } from '../services/task-representation.js';
import { enqueueTaskWebhook } from '../webhooks/task-webhook.js';
import { insertPendingTask } from '../queue/new-task.js';
import { stepKind, stepOptions, stepTarget, type Step } from './steps.js';

// Workflow runs as tasks: the parent waits while its children run. Top-level steps start
// together; a step's `next` steps start when it completes, on its output file (a
// conditions step passes its own input on, and only when all conditions held). The
// parent ends when its last child does. All of it happens in the transactions that
// end each child, so a crash never leaves a step started twice or a parent forgotten.

const ACTIVE = ['pending', 'processing', 'waiting'] as const;

/** Inserts one pending child task per step, on `inputFileId`. */
export async function startSteps(deps: Pick<Deps, 'clock'>, trx: Kysely<Database>, parent: TasksTable, steps: Step[], inputFileId: string | null, input: string | null): Promise<number> {
  const now = iso(deps.clock.now());
  for (const step of steps) {
    const kind = stepKind(step.kind)!;
    const target = stepTarget(step);
    await insertPendingTask(trx, {
      project_id: parent.project_id, kind, input_file_id: inputFileId, input, options: { ...stepOptions(step), ...target }, target,
      parent_id: parent.id, automation_id: parent.automation_id, step, chain: parseChain(parent.chain),
    }, now);
  }
  return steps.length;
}

/** After a child ended (in its transaction): start its next steps, then finish the parent if nothing is left. */
export async function advanceWorkflow(deps: Pick<Deps, 'clock'>, trx: Kysely<Database>, child: TasksTable): Promise<void> {
  if (!child.parent_id) return;
  // Serialise siblings ending at once (PostgreSQL); SQLite's write lock already does.
  let lock = trx.selectFrom('tasks').selectAll().where('id', '=', child.parent_id);
  if (!(trx.getExecutor().adapter instanceof SqliteAdapter)) lock = lock.forUpdate();
  const parent = await lock.executeTakeFirst();
  if (!parent || parent.status !== 'waiting') return;

  const step = child.step ? (JSON.parse(child.step) as Step) : null;
  const results = child.results ? (JSON.parse(child.results) as { continue?: boolean }) : null;
  if (child.status === 'completed' && step?.next?.length && results?.continue !== false) {
    const inputId = child.output_file_id ?? child.input_file_id;
    const input = child.output_file_id ? child.output : child.input;
    await startSteps(deps, trx, parent, step.next, inputId, input);
  }

  const active = await trx.selectFrom('tasks').select('id').where('parent_id', '=', parent.id).where('status', 'in', ACTIVE).limit(1).execute();
  if (active.length > 0) return;
  const ended = await trx.selectFrom('tasks').select(['id', 'kind', 'status', 'error']).where('parent_id', '=', parent.id).orderBy('created').execute();
  const failed = ended.filter((t) => t.status === 'failed' || t.status === 'cancelled');
  const now = iso(deps.clock.now());
  const error = failed.length === 0 ? null : JSON.stringify({
    code: 'workflow_failed',
    message: `${failed.length} of ${ended.length} steps did not complete: ${failed.map((t) => `${t.id} (${t.kind}: ${t.status === 'cancelled' ? 'cancelled' : (JSON.parse(t.error ?? '{}') as { code?: string }).code ?? 'failed'})`).join(', ')}`,
  });
  const status = failed.length === 0 ? 'completed' : 'failed';
  await trx.updateTable('tasks').set({ status, error, progress: 100, finished: now, updated: now }).where('id', '=', parent.id).execute();
  const done = await trx.selectFrom('tasks').selectAll().where('id', '=', parent.id).executeTakeFirstOrThrow();
  await recordEvent(trx, parent.project_id, status === 'completed' ? 'task.completed' : 'task.failed', toTaskObject(done), now, parseChain(done.chain));
  await enqueueTaskWebhook(trx, done, `task.${status}`, now);
  await advanceWorkflow(deps, trx, done);
}
