import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { listPage, mapPage, type Page, type PageRequest } from '../../db/paginate.js';
import { toEventObject, type EventObject } from '../../shapes/events.js';

type Scope = { projectId: string };

// The outbox rows, read back as the project's event log (the same objects webhooks carry).

export async function listEvents(
  deps: Deps,
  scope: Scope,
  request: PageRequest,
  filter: { type?: string },
): Promise<Page<EventObject>> {
  let q = deps.db.selectFrom('events').where('project_id', '=', scope.projectId);
  // `task.*`: every type from `task.` up to (not including) `task/`, the next character after '.'.
  if (filter.type?.endsWith('.*')) {
    const prefix = filter.type.slice(0, -1);
    q = q.where('type', '>=', prefix).where('type', '<', `${prefix.slice(0, -1)}/`);
  } else if (filter.type) q = q.where('type', '=', filter.type);
  // seq breaks ties between events recorded in the same millisecond, newest first.
  const page = await listPage(
    q,
    (f) => f.select(['id', 'type', 'data', 'created', 'chain']).orderBy('created', 'desc').orderBy('seq', 'desc'),
    request,
  );
  return mapPage(page, toEventObject);
}

export async function getEvent(deps: Deps, scope: Scope, id: string): Promise<EventObject> {
  const row = await deps.db
    .selectFrom('events')
    .select(['id', 'type', 'data', 'created', 'chain'])
    .where('project_id', '=', scope.projectId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw new AppError('not_found', `no event ${id} in this project`);
  return toEventObject(row);
}
