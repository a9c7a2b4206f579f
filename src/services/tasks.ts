import type { Deps } from '../deps.js';
import { iso } from '../deps.js';
import { AppError } from '../errors.js';
import type { TaskStatus } from '../db/schema.js';
import { readCounter } from '../db/hot-reads.js';
import { listPage, mapPage, type Page, type PageRequest } from '../db/paginate.js';
import { transact } from '../db/transact.js';
import type { AdmitPorts, Kind } from '../kinds/define.js';
import { enginesOf } from '../kinds/engines.js';
import { engineRefusals, implementedKinds, inputKindProblems, kindEntry, stepChecks } from '../kinds/registry.js';
import { cancel, insertPending, pendingTasks } from '../queue/task-state.js';
import { toFileObject } from '../shapes/files.js';
import { fileSummary, toTaskObject, type TaskObject, type WorkflowChildSummary } from '../shapes/tasks.js';
import { signals, TASK_CANCELLED } from '../signals.js';
import { validationFailed } from '../validation-errors.js';
import { checkEndpointUrl } from '../webhooks/endpoint-rules.js';
import { advance } from '../workflows/runner.js';
import { findFileRow } from './files.js';
import { findMedia } from './media.js';
import { checkFilename, normalizeFolder } from './paths.js';

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
  const kind = kindEntry(body.kind);
  if (!kind) {
    throw new AppError(
      'kind_not_supported',
      `kind "${body.kind}" is part of the API but not implemented in this mediad yet; supported now: ${implementedKinds().join(', ')}`,
      {
        details: [{ field: 'kind', message: 'not implemented yet' }],
      },
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
        options: { ...options, ...target },
        target,
        webhook_url: webhookUrl,
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

export async function getTask(
  deps: Deps,
  scope: Scope,
  id: string,
): Promise<TaskObject & { workflow?: WorkflowChildSummary[] }> {
  const row = await deps.db
    .selectFrom('tasks')
    .selectAll()
    .where('project_id', '=', scope.projectId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw new AppError('not_found', `no task ${id} in this project`);
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
  filter: { status?: TaskStatus; kind?: string },
): Promise<Page<TaskObject>> {
  let q = deps.db.selectFrom('tasks').where('project_id', '=', scope.projectId);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.kind) q = q.where('kind', '=', filter.kind);
  // Unfiltered, the kept counter gives the total without counting rows.
  const counted =
    filter.status === undefined && filter.kind === undefined ? readCounter(deps, scope.projectId, 'tasks') : undefined;
  return mapPage(
    await listPage(q, (f) => f.selectAll().orderBy('created', 'desc').orderBy('id', 'desc'), request, counted),
    toTaskObject,
  );
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
