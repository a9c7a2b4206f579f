import type { Kysely } from 'kysely';

// Playable early (issue 23): when an adaptive_video task's package first became playable, while
// the task still runs (its output file row is then `processing`; see docs/tasks.md).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('playable_at', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tasks').dropColumn('playable_at').execute();
}
