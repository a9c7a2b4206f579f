import { SqliteAdapter, type Kysely } from 'kysely';
import type { Database, TasksTable } from '../db/schema.js';
import { endParent, insertPending } from '../queue/task-state.js';
import { parseChain } from '../shapes/events.js';
import { stepKind, stepOptions, stepTarget, type Step } from './steps.js';

// Workflow runs as tasks: the parent waits while its children run. Top-level steps start
// together; a step's `next` steps start when it completes, on its output file (a
// conditions step, or a step whose output is a track or an intelligence document, passes its
// own input on; a conditions step only when all conditions held). The
// parent ends when its last child does. All of it happens in the transactions that
// end each child, so a crash never leaves a step started twice or a parent forgotten.

const ACTIVE = ['pending', 'processing', 'waiting'] as const;

/** Inserts one pending child task per step, on `inputFileId`. */
export async function startSteps(
  trx: Kysely<Database>,
  parent: TasksTable,
  steps: Step[],
  inputFileId: string | null,
  input: string | null,
  now: string,
): Promise<void> {
  for (const step of steps) {
    const target = stepTarget(step);
    await insertPending(
      trx,
      {
        project_id: parent.project_id,
        kind: stepKind(step.kind) ?? step.kind,
        input_file_id: inputFileId,
        input,
        options: { ...stepOptions(step), ...target },
        target,
        parent_id: parent.id,
        automation_id: parent.automation_id,
        step,
        chain: parseChain(parent.chain),
      },
      now,
    );
  }
}

/** Outputs the steps after a step run on (video, image and audio files); after anything else they run on its input. */
export const MEDIA_KINDS: ReadonlySet<string> = new Set(['video', 'image', 'audio']);

/** Whether a task's output (a file summary, as JSON text) is a video, image or audio file. */
function isMediaOutput(output: string | null): boolean {
  const parsed: unknown = output ? JSON.parse(output) : null;
  return parsed !== null && typeof parsed === 'object' && 'kind' in parsed && MEDIA_KINDS.has(String(parsed.kind));
}

/** After a task ended (in the transaction that ended it): start its next steps, then end its workflow if nothing is left. */
export async function advance(trx: Kysely<Database>, child: TasksTable, now: string): Promise<void> {
  if (!child.parent_id) return;
  // Serialise siblings ending at once (PostgreSQL); SQLite's write lock already does.
  let lock = trx.selectFrom('tasks').selectAll().where('id', '=', child.parent_id);
  if (!(trx.getExecutor().adapter instanceof SqliteAdapter)) lock = lock.forUpdate();
  const parent = await lock.executeTakeFirst();
  if (!parent || parent.status !== 'waiting') return;

  const step = child.step ? (JSON.parse(child.step) as Step) : null;
  const results = child.results ? (JSON.parse(child.results) as { continue?: boolean }) : null;
  if (child.status === 'completed' && step?.next?.length && results?.continue !== false) {
    // A track or an intelligence document (subtitles, nsfw scores) is not media to work on:
    // the steps after it run on the same input, as after a conditions step.
    const onOutput = child.output_file_id !== null && isMediaOutput(child.output);
    const inputId = onOutput ? child.output_file_id : child.input_file_id;
    const input = onOutput ? child.output : child.input;
    await startSteps(trx, parent, step.next, inputId, input, now);
  }

  const active = await trx
    .selectFrom('tasks')
    .select('id')
    .where('parent_id', '=', parent.id)
    .where('status', 'in', ACTIVE)
    .limit(1)
    .execute();
  if (active.length > 0) return;
  const ended = await trx
    .selectFrom('tasks')
    .select(['id', 'kind', 'status', 'error'])
    .where('parent_id', '=', parent.id)
    .orderBy('created')
    .execute();
  const failed = ended.filter((t) => t.status === 'failed' || t.status === 'cancelled');
  const error =
    failed.length === 0
      ? null
      : {
          code: 'workflow_failed',
          message: `${failed.length} of ${ended.length} steps did not complete: ${failed.map((t) => `${t.id} (${t.kind}: ${t.status === 'cancelled' ? 'cancelled' : ((JSON.parse(t.error ?? '{}') as { code?: string }).code ?? 'failed')})`).join(', ')}`,
        };
  const done = await endParent(trx, parent.id, failed.length === 0 ? 'completed' : 'failed', error, now);
  if (done) await advance(trx, done, now);
}
