import { sql, type Kysely } from 'kysely';
import { remakeIndexes } from './remake-indexes.js';

// Four of the tasks table's indexes hold only the rows their queries look for: a claim reads pending
// tasks (tasks_claim), lease recovery processing ones (tasks_lease), the dashboard failed ones
// (tasks_project_failed), workflows their steps (tasks_parent). Indexed in full, every claim and
// every completion moved the row's entries in all four (the status is in each key), and on SQLite
// each index page it touched is a frame of the commit's WAL write: an autocommitted claim 110–122 µs
// and a completion's update 90–98 µs against 70–74 and 20–24 µs with these (5,000 tasks, one pwrite
// per frame). On PostgreSQL an update that moves an indexed column inserts into every index whose
// predicate the new row meets: three fewer inserts per claim and four per completion. The queries
// that use them say the status as a literal (a bound parameter proves nothing about a partial
// index's predicate); `parent_id = ?` implies `parent_id is not null` on both databases.
const PARTIAL = [
  { name: 'tasks_claim', columns: ['status', 'run_after'], where: sql<boolean>`status = 'pending'` },
  { name: 'tasks_lease', columns: ['status', 'lease_expires'], where: sql<boolean>`status = 'processing'` },
  {
    name: 'tasks_project_failed',
    columns: ['project_id', 'status', 'finished'],
    where: sql<boolean>`status = 'failed'`,
  },
  { name: 'tasks_parent', columns: ['parent_id', 'status'], where: sql<boolean>`parent_id is not null` },
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  await remakeIndexes(db, 'tasks', PARTIAL, true);
}

export async function down(db: Kysely<any>): Promise<void> {
  await remakeIndexes(db, 'tasks', PARTIAL, false);
}
