import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import { AppError } from '../../errors.js';
import { sql, type Kysely } from 'kysely';
import type { Database, TasksTable, TaskStatus } from '../../db/schema.js';
import { compiledTemplate } from '../../db/compiled.js';
import { readCounter } from '../../db/hot-reads.js';
import { listPage, mapPage, type Page, type PageRequest } from '../../db/paginate.js';
import { transact } from '../../db/transact.js';
import type { AdmitPorts, Kind } from '../../kinds/define.js';
import { enginesOf } from '../../kinds/engines.js';
import { HLS_MIME } from '../../media/hls-playlists.js';
import { engineRefusals, inputKindProblems, kindEntry, stepChecks } from '../../kinds/registry.js';
import { TASK_KINDS } from '../../shapes/task-kinds.js';
import { cancel, insertPending, pendingTasks } from '../../queue/task-state.js';
import { toFileObject } from '../../shapes/files.js';
import { fileSummary, toTaskObject, type TaskObject, type WorkflowChildSummary } from '../../shapes/tasks.js';
import { signals, TASK_CANCELLED } from '../../signals.js';
import { validationFailed } from '../../validation-errors.js';
import { checkEndpointUrl } from '../../webhooks/endpoint-rules.js';
import { advance } from '../../workflows/runner.js';
import { findFileRow } from './files.js';
import { findMedia } from './media.js';
import { checkFilename, normalizeFolder } from './paths.js';
import { revealTaskOptions, sealTaskOptions } from './secrets.js';

type Scope = { projectId: string };

/** Properties every task takes; everything else in the body is the kind's options. */
export interface TaskRequest {
  kind: string;
  url?: string;
  file_id?: string;
  filename?: string;
  folder?: string;
  ref?: string;
  webhook_url?: string;
  [option: string]: unknown;
}

const COMMON = new Set(['kind', 'url', 'file_id', 'filename', 'folder', 'ref', 'webhook_url']);

/** Who else the task belongs to: a retry names the task it runs again, and keeps its automation. */
interface TaskOrigin {
  retry_of?: string;
  automation_id?: string | null;
}

export async function createTask(
  deps: Deps,
  scope: Scope,
  body: TaskRequest,
  origin: TaskOrigin = {},
): Promise<TaskObject> {
  const kind = kindEntry(body.kind);
  if (!kind) {
    throw new AppError(
      'kind_not_supported',
      `kind "${body.kind}" is not a task kind; the kinds: ${TASK_KINDS.join(', ')}`,
      { details: [{ field: 'kind', message: 'not a task kind' }] },
    );
  }
  // For http the url is the address to call; for every other kind it is the input to fetch.
  const inputUrl = kind.urlIsOption ? undefined : body.url;
  const hasFile = body.file_id !== undefined;
  if (!kind.urlIsOption && (inputUrl !== undefined) === hasFile) {
    throw new AppError(
      'validation_failed',
      'send exactly one of url (a source to fetch) or file_id (a file of this project)',
      { details: [{ field: inputUrl !== undefined ? 'file_id' : 'url', message: 'exactly one of url / file_id' }] },
    );
  }
  if (!kind.needsInputFile && !kind.urlIsOption && hasFile) {
    throw new AppError('validation_failed', `kind ${kind.kind} takes a url`, {
      details: [{ field: 'file_id', message: `not accepted by ${kind.kind}` }],
    });
  }
  const options: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (!COMMON.has(k) || (k === 'url' && kind.urlIsOption)) options[k] = v;
  if (!kind.validate(options)) throw validationFailed(kind.validate.errors ?? []);
  const problems = kind.problems(options, stepChecks);
  if (problems.length > 0) {
    throw new AppError(
      'validation_failed',
      `the options do not fit together: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`,
      { details: problems },
    );
  }
  // A task webhook must be deliverable, by the same rule as a webhook endpoint's url.
  const webhookUrl =
    body.webhook_url === undefined ? undefined : checkEndpointUrl(body.webhook_url, deps.config.fetch, 'webhook_url');
  const ports: AdmitPorts = {
    mediaExists: async (projectId, mediaId) => (await findMedia(deps.db, projectId, mediaId)) !== undefined,
  };
  await kind.admit(ports, scope.projectId, options);
  const target = {
    ...(body.folder !== undefined ? { folder: normalizeFolder(body.folder) } : {}),
    ...(body.filename !== undefined ? { filename: checkFilename(body.filename) } : {}),
    ...(body.ref !== undefined ? { ref: body.ref } : {}),
  };

  let input: string | null = null;
  if (body.file_id) {
    const file = await findFileRow(deps, scope.projectId, body.file_id);
    if (!file)
      throw new AppError('not_found', `no file ${body.file_id} in this project`, {
        details: [{ field: 'file_id', message: 'not found' }],
      });
    const wrongKind = inputKindProblems(kind, options, file.kind);
    if (wrongKind.length > 0)
      throw new AppError('validation_failed', wrongKind.map((p) => p.message).join('; '), { details: wrongKind });
    // An adaptive_video package's master playlist is no input: its bytes are a playlist, not media.
    if (file.type.startsWith(HLS_MIME))
      throw new AppError(
        'validation_failed',
        'file_id is an adaptive streaming package (an HLS master playlist); use its source video',
        {
          details: [{ field: 'file_id', message: 'is an adaptive streaming package' }],
        },
      );
    // Well-formed options this source cannot satisfy (a rung above its height): 422, not a 400.
    const misfits = kind.fileProblems(options, file);
    if (misfits.length > 0)
      throw new AppError('invalid_for_source', misfits.map((p) => `${p.field}: ${p.message}`).join('; '), {
        details: misfits,
      });
    input = JSON.stringify(fileSummary(toFileObject(deps.config.publicUrl, file)));
  }
  await refuseWithoutEngines(deps, kind, options);

  return transact(deps.db, async (trx) => {
    const cap = deps.config.quotas.pendingTasksPerProject;
    if (cap > 0 && (await pendingTasks(trx, scope.projectId, cap)) >= cap) {
      throw new AppError(
        'too_many_tasks',
        `this project already has ${cap} pending tasks (MEDIAD_MAX_PENDING_TASKS); wait for some to run, or cancel some, then retry`,
        {
          headers: { 'retry-after': '10' },
        },
      );
    }
    const row = await insertPending(
      trx,
      {
        project_id: scope.projectId,
        kind: kind.kind,
        input_file_id: body.file_id,
        input_url: inputUrl,
        input,
        options: { ...sealTaskOptions(deps, scope.projectId, kind.kind, options), ...target },
        target,
        webhook_url: webhookUrl,
        ...origin,
      },
      iso(deps.clock.now()),
    );
    return toTaskObject(row);
  });
}

/**
 * A kind that cannot run with what is configured and installed (prompt without a chat model,
 * speech without pocketsphinx or a speech provider) is refused now with what to set or install,
 * never left to fail later; a workflow's steps likewise, with their paths.
 */
export async function refuseWithoutEngines(deps: Pick<Deps, 'config'>, kind: Kind, options: unknown): Promise<void> {
  const refusals = await engineRefusals(kind, options, () => enginesOf(deps.config));
  if (refusals.length === 0) return;
  throw new AppError('engine_unavailable', refusals.map((r) => r.message).join('; '), { details: refusals });
}

/**
 * A task by id, compiled once (db/compiled.ts): clients poll it while their tasks run, and on
 * PostgreSQL, unnamed, each poll was also planned (0.058 ms of the database's time a poll).
 */
const taskById = compiledTemplate(
  (db: Kysely<Database>, projectId: string, id: string) =>
    db.selectFrom('tasks').selectAll().where('project_id', '=', projectId).where('id', '=', id),
  2,
);

/** The project's task row, or a 404 (another project's id included). */
async function findTaskRow(deps: Pick<Deps, 'db'>, scope: Scope, id: string): Promise<TasksTable> {
  const [row] = (await deps.db.executeQuery(taskById(deps.db, scope.projectId, id))).rows;
  if (!row) throw new AppError('not_found', `no task ${id} in this project`);
  return row;
}

export async function getTask(
  deps: Deps,
  scope: Scope,
  id: string,
): Promise<TaskObject & { workflow?: WorkflowChildSummary[] }> {
  const row = await findTaskRow(deps, scope, id);
  const task = toTaskObject(row);
  if (row.kind !== 'workflow') return task;
  const children = await deps.db
    .selectFrom('tasks')
    .select(['id', 'kind', 'status', 'output_file_id', 'created'])
    .where('parent_id', '=', row.id)
    .orderBy('created')
    .orderBy('id')
    .execute();
  return {
    ...task,
    workflow: children.map((c) => ({
      id: c.id,
      object: 'task' as const,
      kind: c.kind,
      status: c.status,
      output_file_id: c.output_file_id,
    })),
  };
}

export async function listTasks(
  deps: Deps,
  scope: Scope,
  request: PageRequest,
  filter: TaskFilter,
): Promise<Page<TaskObject>> {
  // Unfiltered, the kept counter gives the total without counting rows.
  const counted = Object.values(filter).every((v) => v === undefined)
    ? readCounter(deps, scope.projectId, 'tasks')
    : undefined;
  return mapPage(
    await listPage(
      filterTasks(deps.db, scope.projectId, filter),
      (f) => f.selectAll().orderBy('created', 'desc').orderBy('id', 'desc'),
      request,
      counted,
    ),
    toTaskObject,
  );
}

export interface TaskFilter {
  status?: TaskStatus;
  kind?: string;
  /** Tasks whose input or output is a file of this media. */
  media_id?: string;
  automation_id?: string;
}

/** The project's tasks that match `filter` (the list's, the bulk retry's). */
export function filterTasks(db: Kysely<Database>, projectId: string, filter: TaskFilter) {
  let q = db.selectFrom('tasks').where('project_id', '=', projectId);
  // The status as a literal (a TaskStatus, checked by the route's schema): SQLite re-prepares a
  // statement at every run when a bound value is compared with a partial index's predicate
  // (tasks_claim's status = 'pending', and the others of migration 019).
  if (filter.status) q = q.where('status', '=', sql.lit(filter.status));
  if (filter.kind) q = q.where('kind', '=', filter.kind);
  if (filter.automation_id) q = q.where('automation_id', '=', filter.automation_id);
  const mediaId = filter.media_id;
  if (mediaId) {
    const ofMedia = db
      .selectFrom('files')
      .select('id')
      .where('project_id', '=', projectId)
      .where('media_id', '=', mediaId);
    q = q.where((eb) => eb.or([eb('input_file_id', 'in', ofMedia), eb('output_file_id', 'in', ofMedia)]));
  }
  return q;
}

const RETRYABLE: TaskStatus[] = ['failed', 'cancelled'];
/** Tasks one POST /tasks/retry takes at most; `more` says when others are left for the next call. */
export const MAX_BULK_RETRY = 500;
/**
 * How long retries run before the event loop gets a turn. On SQLite every query of a retry
 * completes without giving the loop one, so a long run would hold up every other request (/health
 * too); a request's I/O needs several turns, so they come often.
 */
const TURN_MS = 5;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The request that made a task, rebuilt from its row (its secrets revealed, to be sealed anew), to run it again. */
function requestOf(deps: Deps, row: TasksTable): TaskRequest {
  const options = revealTaskOptions(deps, row.project_id, row.kind, JSON.parse(row.options) as Record<string, unknown>);
  return {
    ...options,
    kind: row.kind,
    ...(row.input_file_id ? { file_id: row.input_file_id } : {}),
    ...(row.input_url ? { url: row.input_url } : {}),
    ...(row.webhook_url ? { webhook_url: row.webhook_url } : {}),
  };
}

async function retryRow(deps: Deps, scope: Scope, row: TasksTable): Promise<TaskObject> {
  if (row.parent_id)
    throw new AppError('conflict', `task ${row.id} is a step of workflow ${row.parent_id}: retry the workflow task`);
  if (!RETRYABLE.includes(row.status))
    throw new AppError('conflict', `task ${row.id} is ${row.status}; only a failed or cancelled task can be retried`);
  // Everything a new task is checked for is checked again: the input file may be gone, the kind's rules may have changed.
  return createTask(deps, scope, requestOf(deps, row), { retry_of: row.id, automation_id: row.automation_id });
}

/** POST /tasks/{id}/retry: a new task of the same kind, input and options (retry_of names the old one). */
export async function retryTask(deps: Deps, scope: Scope, id: string): Promise<TaskObject> {
  return retryRow(deps, scope, await findTaskRow(deps, scope, id));
}

export interface RetryResult {
  object: 'retry';
  retried: number;
  tasks: string[];
  /** Tasks that could not run again, and why (their input file was deleted, the project's pending limit was reached…). */
  errors: { task_id: string; code: string; message: string }[];
  /** More failed tasks matched than one call takes (MAX_BULK_RETRY): call again for the next ones. */
  more: boolean;
}

/** The failed top-level tasks of the filter not retried before, oldest first: one more than a call takes. */
export function retryCandidates(db: Kysely<Database>, projectId: string, filter: Omit<TaskFilter, 'status'>) {
  return (
    filterTasks(db, projectId, { ...filter, status: 'failed' })
      .where('parent_id', 'is', null)
      // A failed task retried before stays failed; it is not retried twice.
      .where((eb) =>
        eb.not(
          eb.exists(eb.selectFrom('tasks as again').select('again.id').whereRef('again.retry_of', '=', 'tasks.id')),
        ),
      )
      .selectAll()
      .orderBy('created')
      .orderBy('id')
      .limit(MAX_BULK_RETRY + 1)
  );
}

/**
 * POST /tasks/retry: every failed task of the filter (top-level tasks: a workflow is retried whole),
 * not retried before, oldest first, at most MAX_BULK_RETRY, giving the event loop a turn every
 * TURN_MS. A task that cannot be retried is reported, not fatal; reaching the project's
 * pending limit stops the run. A media or automation of the filter must be the project's (404).
 */
export async function retryTasks(deps: Deps, scope: Scope, filter: Omit<TaskFilter, 'status'>): Promise<RetryResult> {
  if (filter.media_id && !(await findMedia(deps.db, scope.projectId, filter.media_id)))
    throw new AppError('not_found', `no media ${filter.media_id} in this project`, {
      details: [{ field: 'media_id', message: 'not found' }],
    });
  if (filter.automation_id) {
    const automation = await deps.db
      .selectFrom('automations')
      .select('id')
      .where('project_id', '=', scope.projectId)
      .where('id', '=', filter.automation_id)
      .executeTakeFirst();
    if (!automation)
      throw new AppError('not_found', `no automation ${filter.automation_id} in this project`, {
        details: [{ field: 'automation_id', message: 'not found' }],
      });
  }
  const rows = await retryCandidates(deps.db, scope.projectId, filter).execute();
  const more = rows.length > MAX_BULK_RETRY;
  const result: RetryResult = { object: 'retry', retried: 0, tasks: [], errors: [], more };
  let turn = performance.now();
  for (const row of rows.slice(0, MAX_BULK_RETRY)) {
    if (performance.now() - turn >= TURN_MS) {
      await nextTurn();
      turn = performance.now();
    }
    try {
      result.tasks.push((await retryRow(deps, scope, row)).id);
      result.retried++;
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      result.errors.push({ task_id: row.id, code: err.code, message: err.message });
      if (err.code === 'too_many_tasks') break;
    }
  }
  return result;
}

/** A pending, processing or waiting task becomes cancelled; the worker running it notices and stops FFmpeg. */
export async function cancelTask(deps: Deps, scope: Scope, id: string): Promise<TaskObject> {
  const task = await transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    const result = await cancel(trx, scope.projectId, id, now);
    if (!result) throw new AppError('not_found', `no task ${id} in this project`);
    if (!result.cancelled)
      throw new AppError('conflict', `task ${id} is already ${result.row.status} and cannot be cancelled`);
    // A cancelled step may end its workflow.
    await advance(trx, result.row, now);
    return toTaskObject(result.row);
  });
  signals.emit(TASK_CANCELLED, id);
  return task;
}
