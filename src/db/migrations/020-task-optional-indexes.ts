import { sql, type Kysely } from 'kysely';
import { remakeIndexes } from './remake-indexes.js';

// Three of the tasks table's indexes are on a column most tasks leave null: the automation that
// made the task, the task it retries, the output file (null until the task completes). Indexed in
// full, every task put an entry for its null in each, and on PostgreSQL each claim and completion
// (an update that is never HOT: the status is in tasks_status_project) put one more in each.
// Partial, they hold only the tasks their queries look for: an automation's tasks
// (`automation_id = ?`) and the bulk retry's `again.retry_of = tasks.id` imply the column is not
// null, on both databases (the media filter's `output_file_id in (…)` too, though it reads every
// task of the project, before and after, through the prefix of one project index or another).
// Measured on SQLite: a small image task's commits wrote 52.2 pages to its WAL, 48.4 without
// these indexes' nulls.
const PARTIAL = [
  {
    name: 'tasks_project_automation',
    columns: ['project_id', 'automation_id', 'created'],
    where: sql<boolean>`automation_id is not null`,
  },
  { name: 'tasks_retry_of', columns: ['retry_of'], where: sql<boolean>`retry_of is not null` },
  {
    name: 'tasks_project_output',
    columns: ['project_id', 'output_file_id'],
    where: sql<boolean>`output_file_id is not null`,
  },
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  await remakeIndexes(db, 'tasks', PARTIAL, true);
}

export async function down(db: Kysely<any>): Promise<void> {
  await remakeIndexes(db, 'tasks', PARTIAL, false);
}
