import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { toEventObject, type EventObject } from '../db/queries/events.js';
import type { Page } from '../http/envelope.js';

type Scope = { projectId: string };

// The outbox rows, read back as the project's event log (the same objects webhooks carry).

export async function listEvents(deps: Deps, scope: Scope, page: number, limit: number, filter: { type?: string }): Promise<Page<EventObject>> {
  let q = deps.db.selectFrom('events').where('project_id', '=', scope.projectId);
  if (filter.type) q = q.where('type', '=', filter.type);
  const [rows, total] = await Promise.all([
    // seq breaks ties between events recorded in the same millisecond, newest first.
    q.select(['id', 'type', 'data', 'created', 'chain']).orderBy('created', 'desc').orderBy('seq', 'desc').limit(limit).offset((page - 1) * limit).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow().then((r) => Number(r.n)),
  ]);
  return { items: rows.map(toEventObject), total, page, limit };
}

export async function getEvent(deps: Deps, scope: Scope, id: string): Promise<EventObject> {
  const row = await deps.db.selectFrom('events').select(['id', 'type', 'data', 'created', 'chain']).where('project_id', '=', scope.projectId).where('id', '=', id).executeTakeFirst();
  if (!row) throw new AppError('not_found', `no event ${id} in this project`);
  return toEventObject(row);
}
