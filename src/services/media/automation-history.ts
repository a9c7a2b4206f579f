import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { listPage, type Page, type PageRequest } from '../../db/paginate.js';
import { toAutomationRunObject, type AutomationRunObject } from '../../shapes/operations.js';

// GET /automations/{id}/runs: the workflow tasks an automation started, newest first, each with
// the tasks of its steps (a step's `next` steps are children of the same workflow task).

const COLUMNS = [
  'id',
  'kind',
  'status',
  'error',
  'created',
  'started',
  'finished',
  'input_file_id',
  'output_file_id',
] as const;

export async function listAutomationRuns(
  deps: Deps,
  scope: { projectId: string },
  automationId: string,
  request: PageRequest,
): Promise<Page<AutomationRunObject>> {
  const automation = await deps.db
    .selectFrom('automations')
    .select('id')
    .where('project_id', '=', scope.projectId)
    .where('id', '=', automationId)
    .executeTakeFirst();
  if (!automation) throw new AppError('not_found', `no automation ${automationId} in this project`);
  const page = await listPage(
    deps.db
      .selectFrom('tasks')
      .where('project_id', '=', scope.projectId)
      .where('automation_id', '=', automationId)
      .where('parent_id', 'is', null),
    (q) => q.select(COLUMNS).orderBy('created', 'desc').orderBy('id', 'desc'),
    request,
  );
  const ids = page.items.map((r) => r.id);
  if (ids.length === 0) return { ...page, items: [] };
  const [steps, runs] = await Promise.all([
    deps.db
      .selectFrom('tasks')
      .select([...COLUMNS, 'parent_id'])
      .where('project_id', '=', scope.projectId)
      .where('parent_id', 'in', ids)
      .orderBy('created')
      .orderBy('id')
      .execute(),
    deps.db
      .selectFrom('automation_runs')
      .select(['task_id', 'event_id'])
      .where('automation_id', '=', automationId)
      .where('task_id', 'in', ids)
      .execute(),
  ]);
  const byParent = new Map<string, typeof steps>();
  for (const s of steps) {
    const list = byParent.get(s.parent_id ?? '') ?? [];
    list.push(s);
    byParent.set(s.parent_id ?? '', list);
  }
  const events = new Map(runs.map((r) => [r.task_id, r.event_id]));
  return {
    ...page,
    items: page.items.map((w) => toAutomationRunObject(w, events.get(w.id) ?? null, byParent.get(w.id) ?? [])),
  };
}
