import type { Kysely } from 'kysely';

// Hardening: the automation chain that caused a task or an event (so automations cannot
// trigger themselves without end), an index for per-project queue limits and fair claiming,
// and the blob journal (blobs written or deleted outside the row's transaction).
export async function up(db: Kysely<any>): Promise<void> {
  // JSON arrays of automation ids, oldest first; null when a client's request caused it.
  await db.schema.alterTable('tasks').addColumn('chain', 'text').execute();
  await db.schema.alterTable('events').addColumn('chain', 'text').execute();
  await db.schema
    .createIndex('tasks_status_project')
    .on('tasks')
    .columns(['status', 'project_id', 'run_after'])
    .execute();

  // A row per blob whose fate is not yet settled by a committed files row: 'put' is written
  // before the bytes and removed with the row's insert; 'delete' is written with the row's
  // delete and removed once the bytes are gone. What is left after a crash is swept.
  await db.schema
    .createTable('blob_journal')
    .addColumn('blob_key', 'text', (c) => c.primaryKey())
    .addColumn('op', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('created', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('blob_journal').execute();
  await db.schema.dropIndex('tasks_status_project').execute();
  await db.schema.alterTable('events').dropColumn('chain').execute();
  await db.schema.alterTable('tasks').dropColumn('chain').execute();
}
