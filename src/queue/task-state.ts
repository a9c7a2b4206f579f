import {
  SqliteAdapter,
  sql,
  type CompiledQuery,
  type Kysely,
  type RawBuilder,
  type UpdateQueryBuilder,
  type UpdateResult,
} from 'kysely';
import type { Database, TasksTable, TaskStatus } from '../db/schema.js';
import { compiledTemplate } from '../db/compiled.js';
import type { readFile } from '../db/hot-reads.js';
import { bumpCounter } from '../db/queries/counters.js';
import { addUsage, USAGE_METRICS, type UsageDelta } from '../db/queries/usage.js';
import { heldWrite, valuesOf, wake } from '../db/transact.js';
import { recordEvent } from '../events/record.js';
import { newId } from '../ids.js';
import { chainText, parseChain, type Chain } from '../shapes/events.js';
import { fileSummary, toTaskObject, type TaskTarget } from '../shapes/tasks.js';
import type { FileObject } from '../shapes/files.js';
import { TASK_READY } from '../signals.js';
import { enqueueTaskWebhook } from '../webhooks/task-webhook.js';
import { policyOf } from './policies.js';

// The one owner of the task row's life: every change of `tasks.status` is made here, each
// transition with its event (and its task webhook) in the caller's transaction.
//
//   pending ──claim──> processing ──complete──> completed
//      ^                   │  │ └──fail──────> failed
//      └──────release──────┘  └──wait──> waiting ──endParent──> completed | failed
//   pending | processing | waiting ──cancel──> cancelled
//
// A worker holds a processing task under a lease (lease_owner, lease_expires); every transition
// out of processing is guarded by that lease, so a worker whose task was cancelled or taken over
// after its lease expired changes nothing.

/** Thrown when the task is no longer leased by this worker: the caller's transaction rolls back. */
export class LeaseLostError extends Error {
  constructor(id: string) {
    super(`task ${id} is no longer leased by this worker (cancelled, or its lease expired)`);
    this.name = 'LeaseLostError';
  }
}

type Db = Kysely<Database>;
type Leased = Pick<TasksTable, 'id' | 'lease_owner'>;
/** A task as claim() answered it: its `updated` is when this attempt started. */
type Claimed = Leased & Pick<TasksTable, 'updated'>;
const ACTIVE: TaskStatus[] = ['pending', 'processing', 'waiting'];

/**
 * The lease guard: the row is still processing under the lease this worker was given. Its checks
 * are `is not distinct from`, which no PostgreSQL index serves, so the row is found by its id
 * whatever the plan's statistics: with `status = $n` a generic plan read the task through the
 * status index and filtered every processing task for the id (a task's completion, its heartbeat).
 */
function leased(q: UpdateQueryBuilder<Database, 'tasks', 'tasks', UpdateResult>, task: Leased) {
  return q
    .where('id', '=', task.id)
    .where('status', 'is not distinct from', 'processing')
    .where('lease_owner', 'is not distinct from', task.lease_owner);
}

function heldOrThrow(row: TasksTable | undefined, id: string): TasksTable {
  if (!row) throw new LeaseLostError(id);
  return row;
}

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
  /** The automations whose runs led to this task (services/media/automation-runs.ts). */
  chain?: Chain;
  /** The failed or cancelled task this one runs again (POST /tasks/{id}/retry). */
  retry_of?: string;
}

/**
 * The one way a task is created (POST /tasks, workflow steps, automation runs): a pending row with
 * its kind's attempt limit, the project's task count and its task.created event, in the caller's
 * transaction; workers wake when it commits.
 */
export async function insertPending(trx: Db, t: NewTask, now: string): Promise<TasksTable> {
  const row: TasksTable = {
    id: t.id ?? newId('task'),
    project_id: t.project_id,
    kind: t.kind,
    status: 'pending',
    input_file_id: t.input_file_id ?? null,
    input_url: t.input_url ?? null,
    input: t.input ?? null,
    options: JSON.stringify(t.options),
    target: JSON.stringify(t.target ?? {}),
    output: null,
    output_file_id: null,
    error: null,
    progress: 0,
    webhook_url: t.webhook_url ?? null,
    attempts: 0,
    max_attempts: policyOf(t.kind).maxAttempts,
    run_after: now,
    lease_owner: null,
    lease_expires: null,
    created: now,
    updated: now,
    started: null,
    finished: null,
    parent_id: t.parent_id ?? null,
    automation_id: t.automation_id ?? null,
    step: t.step === undefined ? null : JSON.stringify(t.step),
    results: null,
    chain: chainText(t.chain),
    retry_of: t.retry_of ?? null,
    playable_at: null,
  };
  await trx.insertInto('tasks').values(row).execute();
  await bumpCounter(trx, t.project_id, 'tasks', 1);
  await recordEvent(trx, t.project_id, 'task.created', toTaskObject(row), now, t.chain);
  await wake(trx, TASK_READY);
  return row;
}

/** How many tasks the project has pending, counted up to `upTo` (enough to compare with a limit). */
export async function pendingTasks(db: Db, projectId: string, upTo: number): Promise<number> {
  const row = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('tasks')
        .select('id')
        .where('status', '=', sql.lit('pending')) // a literal: bound, SQLite re-prepared it at every task created
        .where('project_id', '=', projectId)
        .limit(upTo)
        .as('p'),
    )
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// Claiming is one UPDATE … WHERE id = (a due pending task) RETURNING *. SQLite runs it under
// its single writer lock; PostgreSQL adds FOR UPDATE SKIP LOCKED so concurrent workers take
// different rows instead of queueing behind one another.
//
// Claims are fair across projects: the task comes from the project with due work that has the
// fewest tasks running (ties: the one waiting longest), then that project's oldest due task. So a
// project that queued a thousand tasks shares the workers with one that queued one, instead of
// making it wait behind its backlog.

/**
 * A task whose kind is paused for its project's organisation (POST /queue/kinds/{kind}/pause) is
 * not claimed: it stays pending until resumed. `tasks` is the nearest enclosing tasks table.
 * Uncorrelated, so the paused pairs are read once per claim and looked up in a hash: as a
 * correlated `not exists` PostgreSQL ran it for each task in the fair project's aggregate, 600 of
 * a claim's 704 buffer reads with 200 tasks queued (bench/pg-trace.ts). No column is null.
 *
 * The pairs are read from the pauses out, each paused organisation's projects found by their
 * index on org_id, so a claim costs the same with 20 projects or 20,000: joined the other way,
 * SQLite scanned every project twice a claim (1.1 ms a scan with 20,000 projects, paused or not),
 * and PostgreSQL's plan read the projects' whole index once anything was paused. SQLite keeps a
 * CROSS JOIN's order; PostgreSQL runs a LATERAL subquery for each outer row, and `offset 0` keeps
 * it from being flattened into a join it would reorder.
 */
function notPaused(sqlite: boolean) {
  const pausedProjects = sqlite
    ? sql`projects pp where pp.org_id = qp.org_id`
    : sql`lateral (select p.id from projects p where p.org_id = qp.org_id offset 0) pp`;
  return sql<boolean>`(tasks.project_id, tasks.kind) not in (select pp.id, qp.kind from queue_pauses qp cross join ${pausedProjects})`;
}

/**
 * The project whose due task is claimed next: of those with a due task, the one with the fewest
 * running, then the one whose first due task has waited longest. The projects with pending tasks
 * are walked one index seek each (a recursive skip scan of tasks_status_project), and each one's
 * first due task and running count are index lookups: grouping every pending task by project made
 * a claim scan the whole queue, 7.4 ms on PostgreSQL with 10,000 tasks queued.
 */
function fairProject(due: RawBuilder<boolean>) {
  // Each step is `order by project_id limit 1`, not min(project_id): given the first rows on a new
  // database (the plan PostgreSQL keeps for the claim's connection), min() was planned as an
  // aggregate over every pending task in tasks_claim, twice a claim; the order is
  // tasks_status_project's own, so the step is one index seek whatever the statistics.
  return sql<string>`(with recursive queued(project_id) as (
      select (select project_id from tasks where status = 'pending' order by project_id limit 1)
      union all
      select (select project_id from tasks where status = 'pending' and project_id > queued.project_id
        order by project_id limit 1)
      from queued where queued.project_id is not null
    ), ranked as (
      select project_id,
        (select run_after from tasks where tasks.project_id = queued.project_id and ${due}
          order by run_after limit 1) as first_due,
        (select count(*) from tasks where status = 'processing' and tasks.project_id = queued.project_id) as running
      from queued where project_id is not null
    )
    select project_id from ranked where first_due is not null order by running, first_due limit 1)`;
}

/** A file row as the worker reads its input (db/hot-reads.ts). */
export type InputFileRow = NonNullable<Awaited<ReturnType<typeof readFile>>>;

/**
 * A claimed task, and on PostgreSQL its input file's row, read by the claim's statement: one round
 * trip of a worker's seven fewer. `inputFile` is undefined where it was not read (SQLite, where a
 * read is an in-process call), null where the task names no input file or it no longer exists.
 */
export interface ClaimedTask {
  task: TasksTable;
  inputFile?: InputFileRow | null;
}

/** pending → processing under a lease of `leaseMs` for `owner`; undefined when nothing is due. */
export async function claim(
  db: Db,
  owner: string,
  leaseMs: number,
  now: Date,
  kinds?: readonly string[],
): Promise<ClaimedTask | undefined> {
  const fair = await claimOne(db, owner, leaseMs, now, kinds, true);
  // On PostgreSQL the fair project's due tasks may all be locked by other claims in flight: then
  // any due task is taken rather than none. SQLite locks no rows, so there nothing fair is nothing
  // due (a second statement after every empty claim was one per wake-up of an idle pool).
  if (fair || db.getExecutor().adapter instanceof SqliteAdapter) return fair;
  return claimOne(db, owner, leaseMs, now, kinds, false);
}

/** The claim's statement for one (fair, kinds) pair, compiled once (db/compiled.ts): rebuilding it was a worker's largest Kysely cost (a CPU profile: 1.46 of 2.8 s). */
const claimStatements = new Map<string, ReturnType<typeof claimStatement>>();

type ClaimRow = TasksTable & { input_file?: InputFileRow | null };

function claimStatement(kinds: readonly string[] | undefined, fair: boolean) {
  return compiledTemplate(
    (db: Db, owner: string, leaseExpires: string, iso: string): { compile(): CompiledQuery<ClaimRow> } => {
      const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
      // The status as a literal: tasks_claim holds pending tasks only (migration 019).
      const due = sql<boolean>`status = 'pending' and run_after <= ${iso}${kinds ? sql` and kind in (${sql.join(kinds)})` : sql``} and ${notPaused(sqlite)}`;
      const update = db
        .updateTable('tasks')
        .set((eb) => ({
          status: 'processing',
          lease_owner: owner,
          lease_expires: leaseExpires,
          attempts: eb('attempts', '+', 1),
          started: eb.fn.coalesce('started', eb.val(iso)),
          updated: iso,
        }))
        .where('id', '=', (eb) => {
          let q = eb.selectFrom('tasks').select('id').where(due);
          if (fair) q = q.where('project_id', '=', fairProject(due));
          q = q.orderBy('run_after').orderBy('created').limit(1);
          return sqlite ? q : q.forUpdate().skipLocked();
        })
        .returningAll();
      // SQLite checks the row is still pending. On PostgreSQL the subquery's FOR UPDATE has already
      // checked it on the row's newest version, and a second condition gave the generic plan the
      // choice of an index on status, a scan of every pending task for the one id (200 buffers).
      if (sqlite) return update.where('status', '=', 'pending');
      // The input file's row as JSON beside the task (pg parses json; bigint comes out a number),
      // found by its id alone, and null when it is not the task's project's: with the project in
      // the condition the generic plan read the project's files through files_project_ref.
      return db
        .with('claimed', () => update)
        .selectFrom('claimed')
        .selectAll('claimed')
        .select(
          sql<InputFileRow | null>`(select case when f.project_id = claimed.project_id then row_to_json(f) end from files f where f.id = claimed.input_file_id)`.as(
            'input_file',
          ),
        );
    },
    3,
    // Planned once, not on every claim: on PostgreSQL it runs on a connection of generic plans (db/prepared.ts).
    { genericPlan: true },
  );
}

async function claimOne(
  db: Db,
  owner: string,
  leaseMs: number,
  now: Date,
  kinds: readonly string[] | undefined,
  fair: boolean,
): Promise<ClaimedTask | undefined> {
  const key = `${fair} ${kinds?.join(',') ?? '*'}`;
  let statement = claimStatements.get(key);
  if (!statement) claimStatements.set(key, (statement = claimStatement(kinds, fair)));
  const leaseExpires = new Date(now.getTime() + leaseMs).toISOString();
  const row = (await db.executeQuery(statement(db, owner, leaseExpires, now.toISOString()))).rows[0];
  if (!row) return undefined;
  const { input_file: inputFile, ...task } = row;
  return inputFile === undefined ? { task } : { task, inputFile };
}

/** Extends the lease and stores progress; false when the task is no longer ours (lease lost or cancelled). */
export async function heartbeat(db: Db, task: Leased, leaseMs: number, now: Date, progress?: number): Promise<boolean> {
  const res = await leased(db.updateTable('tasks'), task)
    .set({
      lease_expires: new Date(now.getTime() + leaseMs).toISOString(),
      updated: now.toISOString(),
      ...(progress === undefined ? {} : { progress }),
    })
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Tasks whose worker stopped heartbeating (killed, crashed, partitioned). */
export async function expiredLeases(db: Db, now: Date, limit = 50): Promise<TasksTable[]> {
  return db
    .selectFrom('tasks')
    .selectAll()
    .where('status', '=', sql.lit('processing')) // a literal: tasks_lease holds processing tasks only
    .where('lease_expires', '<', now.toISOString())
    .limit(limit)
    .execute();
}

/** processing → pending, due at `runAfter` (a retry, a shutdown, an expired lease); false when it was not ours. */
export async function release(
  db: Db,
  task: Leased,
  runAfter: Date,
  now: Date,
  error?: { code: string; message: string },
): Promise<boolean> {
  const res = await leased(db.updateTable('tasks'), task)
    .set({
      status: 'pending',
      lease_owner: null,
      lease_expires: null,
      run_after: runAfter.toISOString(),
      updated: now.toISOString(),
      // An early output (a package playable while it was made) is not kept across attempts: the
      // next attempt discards the file output_file_id names if it is still processing.
      output: null,
      playable_at: null,
      ...(error ? { error: JSON.stringify(error) } : {}),
    })
    .executeTakeFirst();
  const released = Number(res.numUpdatedRows) > 0;
  // Due now (a shutdown or an expired lease): wake idle workers, here and elsewhere.
  if (released && runAfter <= now) await wake(db, TASK_READY);
  return released;
}

/** Records the stored input of a `url` task (a retry then reuses it instead of fetching again). */
export async function attachInput(trx: Db, task: Leased, file: FileObject, now: string): Promise<void> {
  heldOrThrow(
    await leased(trx.updateTable('tasks'), task)
      .set({ input_file_id: file.id, input: JSON.stringify(fileSummary(file)), updated: now })
      .returningAll()
      .executeTakeFirst(),
    task.id,
  );
}

export interface Completion {
  outputFileId: string | null;
  /** What the task shows as `output`: a file summary, or a kind's answer (http). */
  output: unknown;
  /** conditions: {passed, failed, continue}. */
  results?: unknown;
}

/** The columns a completion sets. */
function completionSet(c: Completion, now: string) {
  return {
    status: 'completed' as const,
    output: c.output === null ? null : JSON.stringify(c.output),
    output_file_id: c.outputFileId,
    results: c.results === undefined ? null : JSON.stringify(c.results),
    progress: 100,
    error: null,
    lease_owner: null,
    lease_expires: null,
    finished: now,
    updated: now,
  };
}

interface HeldCompletion {
  task: Leased;
  set: ReturnType<typeof completionSet>;
}

// A completion written with the transaction's last writes, gated by the lease: a task no longer
// ours changes no row, and the transaction fails with LeaseLostError (db/transact.ts). On
// PostgreSQL a completion whose other writes are all held too is then one statement.
const heldCompletion = heldWrite('tasks', {
  args: (entries: [string, HeldCompletion][]) => {
    const [c] = valuesOf(entries);
    if (!c || entries.length > 1) throw new Error('one held completion per transaction');
    return { task: { id: c.task.id, lease_owner: c.task.lease_owner }, set: c.set };
  },
  build: (trx, c) => leased(trx.updateTable('tasks'), c.task).set(c.set).returning('id'),
  gate: (entries) => new LeaseLostError(entries.map(([id]) => id).join(', ')),
});

/**
 * processing → completed, with its event, webhook and usage. `current`: the task's row as it is
 * now (the claimed row, when nothing changed it since); given, and the task not a workflow's step
 * (whose parent reads its status in the same transaction), the update is held to the
 * transaction's last writes and the row is made here from it.
 */
export async function complete(
  trx: Db,
  task: Claimed,
  c: Completion,
  now: string,
  current?: TasksTable,
): Promise<TasksTable> {
  const set = completionSet(c, now);
  const held = current && !current.parent_id ? heldCompletion.rowsIn(trx) : null;
  let row: TasksTable;
  if (current && held?.size === 0) {
    held.set(task.id, { task, set });
    row = { ...current, ...set };
  } else {
    row = heldOrThrow(await leased(trx.updateTable('tasks'), task).set(set).returningAll().executeTakeFirst(), task.id);
  }
  await announceEnd(trx, row, now, task.updated);
  return row;
}

/**
 * A running task's output became playable before the task ends (adaptive_video): the output file
 * (status processing) is its output from now on, and `playable_at` says since when (first time only).
 */
export async function markPlayable(
  trx: Db,
  task: Leased,
  c: { outputFileId: string; output: unknown },
  now: string,
): Promise<TasksTable> {
  return heldOrThrow(
    await leased(trx.updateTable('tasks'), task)
      .set((eb) => ({
        output: JSON.stringify(c.output),
        output_file_id: c.outputFileId,
        playable_at: eb.fn.coalesce('playable_at', eb.val(now)),
        updated: now,
      }))
      .returningAll()
      .executeTakeFirst(),
    task.id,
  );
}

/** processing → failed, with its event, webhook and usage; undefined when the task was not ours any more. */
export async function fail(
  trx: Db,
  task: Claimed,
  failure: { code: string; message: string },
  now: string,
): Promise<TasksTable | undefined> {
  const row = await leased(trx.updateTable('tasks'), task)
    .set({
      status: 'failed',
      error: JSON.stringify({ code: failure.code, message: failure.message }),
      // An early output was discarded with the attempt (workers/pool.ts).
      output: null,
      output_file_id: null,
      playable_at: null,
      lease_owner: null,
      lease_expires: null,
      finished: now,
      updated: now,
    })
    .returningAll()
    .executeTakeFirst();
  if (row) await announceEnd(trx, row, now, task.updated);
  return row;
}

/** processing → waiting: a workflow whose steps now run as child tasks. */
export async function wait(trx: Db, task: Leased, now: string): Promise<TasksTable> {
  return heldOrThrow(
    await leased(trx.updateTable('tasks'), task)
      .set({ status: 'waiting', lease_owner: null, lease_expires: null, progress: 0, updated: now })
      .returningAll()
      .executeTakeFirst(),
    task.id,
  );
}

/** waiting → completed | failed: a workflow whose last step ended. Undefined when it was not waiting. */
export async function endParent(
  trx: Db,
  parentId: string,
  status: 'completed' | 'failed',
  error: { code: string; message: string } | null,
  now: string,
): Promise<TasksTable | undefined> {
  const row = await trx
    .updateTable('tasks')
    .set({ status, error: error === null ? null : JSON.stringify(error), progress: 100, finished: now, updated: now })
    .where('id', '=', parentId)
    .where('status', '=', 'waiting')
    .returningAll()
    .executeTakeFirst();
  if (row) await announceEnd(trx, row, now);
  return row;
}

/**
 * An active task and its active children become cancelled, each with its event; the worker
 * running one notices at its next heartbeat (or at once through TASK_CANCELLED in its process).
 * Returns the task as it is now, and whether this call cancelled it.
 */
export async function cancel(
  trx: Db,
  projectId: string,
  id: string,
  now: string,
): Promise<{ row: TasksTable; cancelled: boolean } | undefined> {
  // An early output goes with the run (its worker, or the blob journal's sweep, removes the file).
  const set = {
    status: 'cancelled' as const,
    lease_owner: null,
    lease_expires: null,
    output: null,
    output_file_id: null,
    playable_at: null,
    finished: now,
    updated: now,
  };
  const row = await trx
    .updateTable('tasks')
    .set(set)
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .where('status', 'in', ACTIVE)
    .returningAll()
    .executeTakeFirst();
  if (!row) {
    const existing = await trx
      .selectFrom('tasks')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .executeTakeFirst();
    return existing ? { row: existing, cancelled: false } : undefined;
  }
  await recordEvent(trx, projectId, 'task.cancelled', toTaskObject(row), now, parseChain(row.chain));
  // A cancelled workflow cancels the steps still to run.
  const children = await trx
    .updateTable('tasks')
    .set(set)
    .where('parent_id', '=', id)
    .where('status', 'in', ACTIVE)
    .returningAll()
    .execute();
  for (const child of children)
    await recordEvent(trx, projectId, 'task.cancelled', toTaskObject(child), now, parseChain(child.chain));
  const metric = USAGE_METRICS.tasks('cancelled');
  await addUsage(trx, [{ projectId, at: now, metric, delta: 1 + children.length }]);
  return { row, cancelled: true };
}

/**
 * The end's event, webhook and usage: one task of its final status, and for a task a worker ran
 * (`attemptStart` given: a workflow's time is its steps') the run time of its last attempt.
 */
async function announceEnd(trx: Db, row: TasksTable, now: string, attemptStart?: string): Promise<void> {
  const type = row.status === 'completed' ? 'task.completed' : 'task.failed';
  await recordEvent(trx, row.project_id, type, toTaskObject(row), now, parseChain(row.chain));
  await enqueueTaskWebhook(trx, row, type, now);
  const usage: UsageDelta[] = [
    {
      projectId: row.project_id,
      at: now,
      metric: USAGE_METRICS.tasks(row.status === 'completed' ? 'completed' : 'failed'),
      delta: 1,
    },
  ];
  if (attemptStart !== undefined) {
    const ms = Math.max(0, Math.round(Date.parse(now) - Date.parse(attemptStart)));
    usage.push({ projectId: row.project_id, at: now, metric: USAGE_METRICS.taskMs(row.kind), delta: ms });
  }
  await addUsage(trx, usage);
}

/**
 * Every active task of a project that is being deleted becomes cancelled, without events (nobody
 * is left to receive them); a worker running one loses it at its next heartbeat, and its output
 * is never stored (complete() needs the lease).
 */
export async function cancelProjectTasks(trx: Db, projectId: string, now: string): Promise<number> {
  const res = await trx
    .updateTable('tasks')
    .set({ status: 'cancelled', lease_owner: null, lease_expires: null, finished: now, updated: now })
    .where('project_id', '=', projectId)
    .where('status', 'in', ACTIVE)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}
