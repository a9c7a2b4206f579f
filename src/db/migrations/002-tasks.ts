import type { Kysely } from 'kysely';

// The task row is the job: workers claim it under a lease, there is no second queue.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('tasks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('input_file_id', 'text')
    .addColumn('input_url', 'text')
    .addColumn('input', 'text')
    .addColumn('options', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('output', 'text')
    .addColumn('output_file_id', 'text')
    .addColumn('error', 'text')
    .addColumn('progress', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('webhook_url', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('run_after', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires', 'text')
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('updated', 'text', (c) => c.notNull())
    .addColumn('started', 'text')
    .addColumn('finished', 'text')
    .execute();
  await db.schema.createIndex('tasks_claim').on('tasks').columns(['status', 'run_after']).execute();
  await db.schema.createIndex('tasks_lease').on('tasks').columns(['status', 'lease_expires']).execute();
  await db.schema.createIndex('tasks_project_created').on('tasks').columns(['project_id', 'created', 'id']).execute();

  // What ffprobe/sharp found, kept so a task does not probe its input again.
  await db.schema.alterTable('files').addColumn('probe', 'text').execute();

  // A rotated webhook secret keeps signing beside the new one for a day.
  await db.schema.alterTable('projects').addColumn('webhook_secret_previous', 'text').execute();
  await db.schema.alterTable('projects').addColumn('webhook_secret_rotated', 'text').execute();

  // Webhook deliveries are rows too, written in the transaction that ends the task.
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text')
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt', 'text', (c) => c.notNull())
    .addColumn('lease_expires', 'text')
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('updated', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt'])
    .execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('created', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_attempts_delivery')
    .on('webhook_attempts')
    .columns(['delivery_id', 'attempt'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['webhook_attempts', 'webhook_deliveries', 'tasks']) await db.schema.dropTable(t).execute();
}
