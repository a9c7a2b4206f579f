import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import { readCounter } from '../../db/hot-reads.js';
import { toTaskObject, type TaskObject } from '../../shapes/tasks.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface ProjectStats {
  object: 'project_stats';
  media: number;
  files: number;
  storage_bytes: number;
  /** Tasks created since midnight UTC. */
  tasks_today: number;
  /** Tasks that failed in the last 24 hours. */
  failed_24h: number;
  /** The last ten failures, newest first. */
  recent_failures: TaskObject[];
}

/** GET /project/stats: the dashboard's figures, each one query on an index (the counts are kept counters). */
export async function projectStats(deps: Deps, projectId: string): Promise<ProjectStats> {
  const now = deps.clock.now();
  const midnight = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const dayAgo = iso(new Date(now.getTime() - DAY_MS));
  const failed = deps.db
    .selectFrom('tasks')
    .where('project_id', '=', projectId)
    .where('status', '=', sql.lit('failed')) // a literal: tasks_project_failed holds failed tasks only
    .where('finished', '>', dayAgo);
  const [media, files, storage, today, failedCount, recent] = await Promise.all([
    readCounter(deps, projectId, 'media'),
    readCounter(deps, projectId, 'files'),
    deps.db
      .selectFrom('files')
      .select((eb) => eb.fn.sum<number | string | null>('filesize').as('bytes'))
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow(),
    deps.db
      .selectFrom('tasks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', projectId)
      .where('created', '>=', iso(midnight))
      .executeTakeFirstOrThrow(),
    failed.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    failed.selectAll().orderBy('finished', 'desc').orderBy('id', 'desc').limit(10).execute(),
  ]);
  return {
    object: 'project_stats',
    media,
    files,
    storage_bytes: Number(storage.bytes ?? 0),
    tasks_today: Number(today.n),
    failed_24h: Number(failedCount.n),
    recent_failures: recent.map(toTaskObject),
  };
}
