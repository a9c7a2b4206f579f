import type { Deps } from '../deps.js';
import { eventsRecorded } from '../events/dispatcher.js';
import { iso } from '../deps.js';
import { AppError } from '../errors.js';
import { readCounter } from '../db/queries/counters.js';
import { parseChain, recordEvent } from '../db/queries/events.js';
import type { TaskStatus } from '../db/schema.js';
import type { Page } from '../http/envelope.js';
import { validationFailed, type AjvIssue } from '../http/validation.js';
import { kindEntry } from '../kinds/registry.js';
import { TASK_KINDS } from '../kinds/types.js';
import { taskSignals, TASK_CANCELLED, TASK_READY } from '../queue/signal.js';
import { insertPendingTask, pendingTasks } from '../queue/new-task.js';
import { checkEndpointUrl } from '../webhooks/endpoint-rules.js';
import { findFileRow } from './files.js';
import { checkFilename, normalizeFolder } from './paths.js';
import { toFileObject } from './representations.js';
import { advanceWorkflow } from '../workflows/runner.js';
import { fileSummary, toTaskObject, type TaskObject, type WorkflowChildSummary } from './task-representation.js';

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

export async function createTask(deps: Deps, scope: Scope, body: TaskRequest): Promise<TaskObject> {
  const entry = kindEntry(body.kind);
  if (!entry) {
    throw new AppError('kind_not_supported', `kind "${body.kind}" is part of the API but not implemented in this mediad yet; supported now: ${TASK_KINDS.filter((k) => kindEntry(k)).join(', ')}`, {
      details: [{ field: 'kind', message: 'not implemented yet' }],
    });
  }
  const { processor, validate } = entry;
  // For http the url is the address to call; for every other kind it is the input to fetch.
  const inputUrl = processor.urlIsOption ? undefined : body.url;
  const hasFile = body.file_id !== undefined;
  if (!processor.urlIsOption && (inputUrl !== undefined) === hasFile) {
    throw new AppError('validation_failed', 'send exactly one of url (a source to fetch) or file_id (a file of this project)', { details: [{ field: inputUrl !== undefined ? 'file_id' : 'url', message: 'exactly one of url / file_id' }] });
  }
  if (!processor.needsInputFile && !processor.urlIsOption && hasFile) {
    throw new AppError('validation_failed', `kind ${processor.kind} takes a url`, { details: [{ field: 'file_id', message: `not accepted by ${processor.kind}` }] });
  }
  const options: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (!COMMON.has(k) || (k === 'url' && processor.urlIsOption)) options[k] = v;
  if (!validate(options)) throw validationFailed((validate.errors ?? []) as AjvIssue[]);
  const problems = processor.problems?.(options) ?? [];
  if (problems.length > 0) {
    throw new AppError('validation_failed', `the options do not fit together: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, { details: problems });
  }
  // A task webhook must be deliverable, by the same rule as a webhook endpoint's url.
  const webhookUrl = body.webhook_url === undefined ? undefined : checkEndpointUrl(body.webhook_url, deps.config.fetch, 'webhook_url');
  await processor.admit?.(deps, scope.projectId, options);
  const target = {
    ...(body.folder !== undefined ? { folder: normalizeFolder(body.folder) } : {}),
    ...(body.filename !== undefined ? { filename: checkFilename(body.filename) } : {}),
    ...(body.ref !== undefined ? { ref: body.ref } : {}),
  };

  let input: string | null = null;
  if (body.file_id) {
    const file = await findFileRow(deps, scope.projectId, body.file_id);
    if (!file) throw new AppError('not_found', `no file ${body.file_id} in this project`, { details: [{ field: 'file_id', message: 'not found' }] });
    input = JSON.stringify(fileSummary(toFileObject(deps.config.publicUrl, file)));
  }

  const task = await deps.db.transaction().execute(async (trx) => {
    const now = iso(deps.clock.now());
    const cap = deps.config.quotas.pendingTasksPerProject;
    if (cap > 0 && (await pendingTasks(trx, scope.projectId, cap)) >= cap) {
      throw new AppError('too_many_tasks', `this project already has ${cap} pending tasks (MEDIAD_MAX_PENDING_TASKS); wait for some to run, or cancel some, then retry`, {
        headers: { 'retry-after': '10' },
      });
    }
    const row = await insertPendingTask(trx, {
      project_id: scope.projectId, kind: processor.kind, input_file_id: body.file_id, input_url: inputUrl, input,
      options: { ...options, ...target }, target, webhook_url: webhookUrl,
    }, now);
    const obj = toTaskObject(row);
    return obj;
  });
  taskSignals.emit(TASK_READY);
  eventsRecorded();
  return task;
}

export async function getTask(deps: Deps, scope: Scope, id: string): Promise<TaskObject & { workflow?: WorkflowChildSummary[] }> {
  const row = await deps.db.selectFrom('tasks').selectAll().where('project_id', '=', scope.projectId).where('id', '=', id).executeTakeFirst();
  if (!row) throw new AppError('not_found', `no task ${id} in this project`);
  const task = toTaskObject(row);
  if (row.kind !== 'workflow') return task;
  const children = await deps.db.selectFrom('tasks').select(['id', 'kind', 'status', 'output_file_id', 'created']).where('parent_id', '=', row.id).orderBy('created').orderBy('id').execute();
  return { ...task, workflow: children.map((c) => ({ id: c.id, object: 'task' as const, kind: c.kind, status: c.status, output_file_id: c.output_file_id })) };
}

export async function listTasks(deps: Deps, scope: Scope, page: number, limit: number, filter: { status?: TaskStatus; kind?: string }): Promise<Page<TaskObject>> {
  let q = deps.db.selectFrom('tasks').where('project_id', '=', scope.projectId);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.kind) q = q.where('kind', '=', filter.kind);
  const filtered = filter.status !== undefined || filter.kind !== undefined;
  const [rows, total] = await Promise.all([
    q.selectAll().orderBy('created', 'desc').orderBy('id', 'desc').limit(limit).offset((page - 1) * limit).execute(),
    filtered ? q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow().then((r) => Number(r.n)) : readCounter(deps.db, scope.projectId, 'tasks'),
  ]);
  return { items: rows.map(toTaskObject), total, page, limit };
}

/** A pending or processing task becomes cancelled; the worker running it notices and stops FFmpeg. */
export async function cancelTask(deps: Deps, scope: Scope, id: string): Promise<TaskObject> {
  const task = await deps.db.transaction().execute(async (trx) => {
    const now = iso(deps.clock.now());
    const res = await trx.updateTable('tasks').set({ status: 'cancelled', lease_owner: null, lease_expires: null, finished: now, updated: now })
      .where('project_id', '=', scope.projectId).where('id', '=', id).where('status', 'in', ['pending', 'processing', 'waiting']).executeTakeFirst();
    const row = await trx.selectFrom('tasks').selectAll().where('project_id', '=', scope.projectId).where('id', '=', id).executeTakeFirst();
    if (!row) throw new AppError('not_found', `no task ${id} in this project`);
    if (Number(res.numUpdatedRows) === 0) throw new AppError('conflict', `task ${id} is already ${row.status} and cannot be cancelled`);
    const obj = toTaskObject(row);
    await recordEvent(trx, scope.projectId, 'task.cancelled', obj, now, parseChain(row.chain));
    // A cancelled workflow cancels the steps still to run; a cancelled step may end its workflow.
    const children = await trx.selectFrom('tasks').selectAll().where('parent_id', '=', id).where('status', 'in', ['pending', 'processing', 'waiting']).execute();
    for (const child of children) {
      await trx.updateTable('tasks').set({ status: 'cancelled', lease_owner: null, lease_expires: null, finished: now, updated: now }).where('id', '=', child.id).execute();
      await recordEvent(trx, scope.projectId, 'task.cancelled', toTaskObject({ ...child, status: 'cancelled' }), now, parseChain(child.chain));
    }
    await advanceWorkflow(deps, trx, row);
    return obj;
  });
  taskSignals.emit(TASK_CANCELLED, id);
  eventsRecorded();
  return task;
}
