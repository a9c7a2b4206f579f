import type { Kysely } from 'kysely';

// The claim's order within the fair project (queue/task-state.ts: `status = 'pending' and
// project_id = ? and run_after <= ? order by run_after, created limit 1`) read from the index:
// without `created` in it PostgreSQL sorted every due task of the project on each claim (O(backlog)
// per claim, the anti-join of the pause check run for each), and the index serves all the old one did.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('tasks_status_project').execute();
  await db.schema
    .createIndex('tasks_status_project')
    .on('tasks')
    .columns(['status', 'project_id', 'run_after', 'created'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('tasks_status_project').execute();
  await db.schema
    .createIndex('tasks_status_project')
    .on('tasks')
    .columns(['status', 'project_id', 'run_after'])
    .execute();
}
