import { sql, type Kysely } from 'kysely';

// Three of the tasks table's indexes are on a column most tasks leave null: the automation that made
// the task, the task it retries, the output file (null until the task completes). Indexed in full,
// every task put an entry for its null in each, and on PostgreSQL each claim and completion (an
// update that is never HOT: the status is in tasks_status_project) put one more in each. Partial,
// they hold only the tasks their queries look for: an automation's tasks (`automation_id = ?`) and
// the bulk retry's `again.retry_of = tasks.id` imply the column is not null, on both databases (the
// media filter's `output_file_id in (…)` too, though it reads every task of the project, before and
// after, through the prefix of one project index or another). Measured on SQLite: a small image task's commits wrote 52.2 pages to its WAL, 48.4
// without these indexes' nulls.
const PARTIAL = [
  { name: 'tasks_project_automation', columns: ['project_id', 'automation_id', 'created'], column: 'automation_id' },
  { name: 'tasks_retry_of', columns: ['retry_of'], column: 'retry_of' },
  { name: 'tasks_project_output', columns: ['project_id', 'output_file_id'], column: 'output_file_id' },
] as const;

/** Each index made again: partial (up) or over every row (down). As 019's, written out again: a migration stays as it ran. */
async function remake(db: Kysely<any>, partial: boolean): Promise<void> {
  for (const i of PARTIAL) {
    await db.schema.dropIndex(i.name).execute();
    const index = db.schema
      .createIndex(i.name)
      .on('tasks')
      .columns([...i.columns]);
    await (partial ? index.where(sql.ref(i.column), 'is not', null) : index).execute();
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  await remake(db, true);
}

export async function down(db: Kysely<any>): Promise<void> {
  await remake(db, false);
}
