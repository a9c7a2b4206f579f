import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { cancelProjectTasks } from '../../queue/task-state.js';
import { HOUSEKEEPING, signals } from '../../signals.js';
import { forgetProjectKeys } from './keys.js';

// The first of a deletion's two steps (the second is operations/purge.ts): marking a project
// deleted, in the request's transaction, and waking the housekeeper after the commit.

type Db = Kysely<Database>;

/**
 * In the deleting transaction: the project is gone for every request from this commit on, and its
 * name is free again at once (as an organisation's), not when the purge removes the row.
 */
export async function markProjectDeleted(trx: Db, projectId: string, now: string): Promise<void> {
  await trx
    .updateTable('projects')
    .set({ deleted: now, name: `${projectId} (deleted)` })
    .where('id', '=', projectId)
    .execute();
  await cancelProjectTasks(trx, projectId, now);
  await trx
    .updateTable('events')
    .set({ dispatched: 1 })
    .where('project_id', '=', projectId)
    .where('dispatched', '=', sql.lit(0)) // a literal: events_undispatched holds dispatched = 0 only
    .execute();
  await trx
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', updated: now })
    .where('project_id', '=', projectId)
    .where('status', '=', 'pending')
    .execute();
}

/** After the deleting commit: this process's verified keys of the projects are forgotten, and the purge is due. */
export function afterDeletion(projectIds: string[]): void {
  for (const id of projectIds) forgetProjectKeys(id);
  signals.emit(HOUSEKEEPING);
}
