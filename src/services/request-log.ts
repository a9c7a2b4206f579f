import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import type { Page, PageRequest } from '../db/paginate.js';
import { toRequestObject, type RequestObject } from '../shapes/requests.js';

// Reading the request log (services/recorder.ts writes it): a project's requests, newest first
// (in the order they were written: `seq`, on the (project_id, seq) index).

type ProjectScope = { projectId: string };

export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

export interface RequestFilter {
  status_class?: StatusClass;
  method?: string;
  key_id?: string;
  user_id?: string;
  created_after?: string;
  created_before?: string;
}

/** The project's rows matching `f`. */
function filtered(deps: Pick<Deps, 'db'>, scope: ProjectScope, f: RequestFilter) {
  let q = deps.db.selectFrom('request_log').where('request_log.project_id', '=', scope.projectId);
  if (f.status_class) {
    const low = Number(f.status_class[0]) * 100;
    q = q.where('request_log.status', '>=', low).where('request_log.status', '<', low + 100);
  }
  if (f.method) q = q.where('request_log.method', '=', f.method.toUpperCase());
  if (f.key_id) q = q.where('request_log.key_id', '=', f.key_id);
  if (f.user_id) q = q.where('request_log.user_id', '=', f.user_id);
  if (f.created_after) q = q.where('request_log.created', '>', new Date(f.created_after).toISOString());
  if (f.created_before) q = q.where('request_log.created', '<', new Date(f.created_before).toISOString());
  return q;
}

/** Rows with the name of the key or the email of the user that made them. */
function withNames(q: ReturnType<typeof filtered>) {
  return q
    .leftJoin('api_keys', 'api_keys.id', 'request_log.key_id')
    .leftJoin('users', 'users.id', 'request_log.user_id')
    .selectAll('request_log')
    .select(['api_keys.name as key_name', 'users.email as user_email']);
}

export async function listRequests(
  deps: Pick<Deps, 'db' | 'config'>,
  scope: ProjectScope,
  { page, limit }: PageRequest,
  f: RequestFilter,
): Promise<Page<RequestObject>> {
  const q = filtered(deps, scope, f);
  const [rows, count] = await Promise.all([
    withNames(q)
      .orderBy('request_log.seq', 'desc')
      .limit(limit)
      .offset((page - 1) * limit)
      .execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map((r) => toRequestObject(r, deps.config.publicUrl)), total: Number(count.n), page, limit };
}

export async function getRequest(
  deps: Pick<Deps, 'db' | 'config'>,
  scope: ProjectScope,
  id: string,
): Promise<RequestObject> {
  const row = await withNames(filtered(deps, scope, {}).where('request_log.id', '=', id)).executeTakeFirst();
  if (!row) throw new AppError('not_found', `no request ${id} in this project's log`);
  return toRequestObject(row, deps.config.publicUrl);
}
