import type { Kysely } from 'kysely';
import { newId } from '../ids.js';
import type { Database, TasksTable } from '../db/schema.js';
import { bumpCounter } from '../db/queries/counters.js';
import { chainText, recordEvent, type Chain } from '../db/queries/events.js';
import { kindEntry } from '../kinds/registry.js';
import type { TaskTarget } from '../kinds/types.js';
import { toTaskObject } from '../services/task-representation.js';

export interface NewTask {
  id?: string;
  project_id: string;
  kind: string;
  input_file_id?: string | null;
  input_url?: string | null;
  /** The input file's summary as JSON, when the input is a file already. */
  input?: string | null;
  /** The options as the task shows them (its target fields included). */
  options: Record<string, unknown>;
  target?: TaskTarget;
  webhook_url?: string | null;
  parent_id?: string | null;
  automation_id?: string | null;
  step?: unknown;
  /** The automations whose runs led to this task (services/automation-runs.ts). */
  chain?: Chain;
}

/**
 * How many tasks the project has pending, counted up to `upTo` (enough to compare with a limit
 * without counting a long backlog).
 */
export async function pendingTasks(trx: Kysely<Database>, projectId: string, upTo: number): Promise<number> {
  const row = await trx.selectFrom((eb) => eb.selectFrom('tasks').select('id').where('status', '=', 'pending').where('project_id', '=', projectId).limit(upTo).as('p'))
    .select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * The one way a task is created (POST /tasks, workflow steps, automation runs): a pending
 * row with its kind's attempt limit, the project's task count and its task.created event,
 * all in the caller's transaction.
 */
export async function insertPendingTask(trx: Kysely<Database>, t: NewTask, now: string): Promise<TasksTable> {
  const row: TasksTable = {
    id: t.id ?? newId('task'), project_id: t.project_id, kind: t.kind, status: 'pending',
    input_file_id: t.input_file_id ?? null, input_url: t.input_url ?? null, input: t.input ?? null,
    options: JSON.stringify(t.options), target: JSON.stringify(t.target ?? {}),
    output: null, output_file_id: null, error: null, progress: 0, webhook_url: t.webhook_url ?? null,
    attempts: 0, max_attempts: kindEntry(t.kind)?.processor.policy.maxAttempts ?? 1, run_after: now, lease_owner: null, lease_expires: null,
    created: now, updated: now, started: null, finished: null,
    parent_id: t.parent_id ?? null, automation_id: t.automation_id ?? null, step: t.step === undefined ? null : JSON.stringify(t.step), results: null, chain: chainText(t.chain),
  };
  await trx.insertInto('tasks').values(row).execute();
  await bumpCounter(trx, t.project_id, 'tasks', 1);
  await recordEvent(trx, t.project_id, 'task.created', toTaskObject(row), now, t.chain);
  return row;
}
