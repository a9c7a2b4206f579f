import type { Kysely } from 'kysely';

// Operations (issue 15): why and when a webhook endpoint was disabled; task kinds paused per
// organisation (workers do not claim them for its projects); the worker processes alive, each
// with its heartbeat; an index for an automation's run history.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').addColumn('disabled_reason', 'text').execute();
  await db.schema.alterTable('webhook_endpoints').addColumn('disabled_at', 'text').execute();

  await db.schema
    .createTable('queue_pauses')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('paused', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('queue_pauses_pk', ['org_id', 'kind'])
    .execute();

  await db.schema
    .createTable('workers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('concurrency', 'integer', (c) => c.notNull())
    .addColumn('started', 'text', (c) => c.notNull())
    .addColumn('heartbeat', 'text', (c) => c.notNull())
    .execute();

  // An automation's run history finds the event that started each of its workflow tasks.
  await db.schema.createIndex('automation_runs_task').on('automation_runs').columns(['task_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('automation_runs_task').execute();
  await db.schema.dropTable('workers').execute();
  await db.schema.dropTable('queue_pauses').execute();
  await db.schema.alterTable('webhook_endpoints').dropColumn('disabled_at').execute();
  await db.schema.alterTable('webhook_endpoints').dropColumn('disabled_reason').execute();
}
