import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import type { Page, PageRequest } from '../../db/paginate.js';
import {
  CLASS_COLUMNS,
  decodeLine,
  findInSegment,
  lineMatcher,
  linesNewestFirst,
  type LineFilter,
  type LoggedRequest,
  type StatusClass,
} from '../../db/request-log-segments.js';
import { toRequestObject, type RequestObject } from '../../shapes/requests.js';

// Reading the request log (services/operations/recorder.ts writes it in segments, db/request-log-segments.ts):
// a project's requests newest first, in the order they were written (segments by `seq`, the
// lines of each in reverse). A page without filters, or filtered by status class only, is found
// from the segments' counts and only its segments are read; other filters read the project's
// segments that SQL cannot rule out (a key's or user's id absent from the text, times outside its
// range), test each line without decoding it, and decode only the page's.

type ProjectScope = { projectId: string };

export { STATUS_CLASSES, type StatusClass } from '../../db/request-log-segments.js';

export interface RequestFilter {
  status_class?: StatusClass;
  method?: string;
  key_id?: string;
  user_id?: string;
  created_after?: string;
  created_before?: string;
}

/** The API's filter as the codec tests lines: the time range in ms, the method in capitals. */
const toLineFilter = (f: RequestFilter): LineFilter => ({
  ...(f.status_class ? { statusClass: f.status_class } : {}),
  ...(f.method ? { method: f.method.toUpperCase() } : {}),
  ...(f.key_id ? { keyId: f.key_id } : {}),
  ...(f.user_id ? { userId: f.user_id } : {}),
  ...(f.created_after ? { afterMs: Date.parse(f.created_after) } : {}),
  ...(f.created_before ? { beforeMs: Date.parse(f.created_before) } : {}),
});

/** The project's segments, narrowed by what their ranges and bodies can rule out. */
function segments(deps: Pick<Deps, 'db'>, scope: ProjectScope, f: LineFilter) {
  let q = deps.db.selectFrom('request_log_segments').where('project_id', '=', scope.projectId);
  if (f.afterMs !== undefined) q = q.where('last_created', '>', new Date(f.afterMs).toISOString());
  if (f.beforeMs !== undefined) q = q.where('first_created', '<', new Date(f.beforeMs).toISOString());
  // Ids are letters, digits and '_' (LIKE's one-character wildcard, which only widens the match).
  for (const id of [f.keyId, f.userId]) if (id) q = q.where('body', 'like', `%${id}%`);
  return q;
}

/** The page [offset, offset + limit) of the matching lines of segments given newest first, and how many match. */
function pageOfLines(bodies: readonly string[], f: LineFilter, offset: number, limit: number) {
  const match = lineMatcher(f);
  const page: string[] = [];
  let total = 0;
  for (const body of bodies)
    for (const line of linesNewestFirst(body)) {
      if (!match(line)) continue;
      if (total >= offset && total < offset + limit) page.push(line);
      total++;
    }
  return { items: page.map(decodeLine), total };
}

/** The page and total when the segments' counts answer them (no filter, or a status class only). */
async function countedPage(
  deps: Pick<Deps, 'db'>,
  scope: ProjectScope,
  f: LineFilter,
  offset: number,
  limit: number,
): Promise<{ items: LoggedRequest[]; total: number }> {
  const counted = f.statusClass === undefined ? 'rows' : CLASS_COLUMNS[f.statusClass];
  const all = segments(deps, scope, {});
  const [sum, window] = await Promise.all([
    all.select(sql<number>`coalesce(sum(${sql.ref(counted)}), 0)`.as('n')).executeTakeFirstOrThrow(),
    // The segments that hold the page's requests: those whose running count (newest first) crosses it.
    deps.db
      .selectFrom(
        all
          .select(['seq', sql<number>`${sql.ref(counted)}`.as('n')])
          .select(sql<number>`sum(${sql.ref(counted)}) over (order by seq desc)`.as('newer'))
          .as('s'),
      )
      .select(['seq', 'n', 'newer'])
      .where('newer', '>', offset)
      .where((eb) => eb(eb('newer', '-', eb.ref('n')), '<', offset + limit))
      .orderBy('seq', 'desc')
      .execute(),
  ]);
  if (window.length === 0) return { items: [], total: Number(sum.n) };
  const bodies = await deps.db
    .selectFrom('request_log_segments')
    .select('body')
    .where(
      'seq',
      'in',
      window.map((w) => w.seq),
    )
    .orderBy('seq', 'desc')
    .execute();
  // The first window segment's running count includes the requests of the newer segments before it.
  const skip = offset - (Number(window[0]!.newer) - Number(window[0]!.n));
  const { items } = pageOfLines(
    bodies.map((b) => b.body),
    f,
    skip,
    limit,
  );
  return { items, total: Number(sum.n) };
}

/** The page and total by reading every segment the filter cannot rule out. */
async function scannedPage(
  deps: Pick<Deps, 'db'>,
  scope: ProjectScope,
  f: LineFilter,
  offset: number,
  limit: number,
): Promise<{ items: LoggedRequest[]; total: number }> {
  const rows = await segments(deps, scope, f).select('body').orderBy('seq', 'desc').execute();
  return pageOfLines(
    rows.map((r) => r.body),
    f,
    offset,
    limit,
  );
}

/** The requests with the name of the key or the email of the user that made them. */
async function named(deps: Pick<Deps, 'db' | 'config'>, requests: LoggedRequest[]): Promise<RequestObject[]> {
  const keyIds = [...new Set(requests.flatMap((r) => (r.key_id ? [r.key_id] : [])))];
  const userIds = [...new Set(requests.flatMap((r) => (r.user_id ? [r.user_id] : [])))];
  const [keys, users] = await Promise.all([
    keyIds.length ? deps.db.selectFrom('api_keys').select(['id', 'name']).where('id', 'in', keyIds).execute() : [],
    userIds.length ? deps.db.selectFrom('users').select(['id', 'email']).where('id', 'in', userIds).execute() : [],
  ]);
  const keyName = new Map(keys.map((k) => [k.id, k.name]));
  const email = new Map(users.map((u) => [u.id, u.email]));
  return requests.map((r) =>
    toRequestObject(
      {
        ...r,
        key_name: (r.key_id && keyName.get(r.key_id)) ?? null,
        user_email: (r.user_id && email.get(r.user_id)) ?? null,
      },
      deps.config.publicUrl,
    ),
  );
}

export async function listRequests(
  deps: Pick<Deps, 'db' | 'config'>,
  scope: ProjectScope,
  { page, limit }: PageRequest,
  f: RequestFilter,
): Promise<Page<RequestObject>> {
  const offset = (page - 1) * limit;
  const lf = toLineFilter(f);
  // The segments' counts answer a list filtered by nothing or by a status class only.
  const countable = Object.keys(lf).every((k) => k === 'statusClass');
  const { items, total } = await (countable ? countedPage : scannedPage)(deps, scope, lf, offset, limit);
  return { items: await named(deps, items), total, page, limit };
}

/** One request: found in the few segments whose id range holds its id (ids are time-ordered). */
export async function getRequest(
  deps: Pick<Deps, 'db' | 'config'>,
  scope: ProjectScope,
  id: string,
): Promise<RequestObject> {
  const candidates = await deps.db
    .selectFrom('request_log_segments')
    .select('body')
    .where('project_id', '=', scope.projectId)
    .where('last_id', '>=', id)
    .where('first_id', '<=', id)
    .orderBy('last_id')
    .execute();
  for (const { body } of candidates) {
    const found = findInSegment(body, id);
    if (found) return (await named(deps, [found]))[0]!;
  }
  throw new AppError('not_found', `no request ${id} in this project's log`);
}
