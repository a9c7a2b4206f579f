import type { Kysely } from 'kysely';

// Automations, workflows and webhook endpoints. Events are fanned out from the outbox
// exactly once: `dispatched` flips in the transaction that creates their work.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('events')
    .addColumn('dispatched', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('events_undispatched').on('events').columns(['dispatched', 'seq']).execute();
  await db.schema.createIndex('events_project_type').on('events').columns(['project_id', 'type', 'created']).execute();

  await db.schema
    .createTable('automations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('name', 'text')
    .addColumn('description', 'text')
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('workflow', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('updated', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('automations_project_created')
    .on('automations')
    .columns(['project_id', 'created', 'id'])
    .execute();

  // One run per (event, automation), whatever crashes and redeliveries happen.
  await db.schema
    .createTable('automation_runs')
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('automation_id', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('created', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('automation_runs_pk', ['event_id', 'automation_id'])
    .execute();

  await db.schema.alterTable('tasks').addColumn('parent_id', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('automation_id', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('step', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('results', 'text').execute();
  await db.schema.createIndex('tasks_parent').on('tasks').columns(['parent_id', 'status']).execute();

  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('secret_previous', 'text')
    .addColumn('secret_rotated', 'text')
    .addColumn('failed_deliveries', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('updated', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_endpoints_project')
    .on('webhook_endpoints')
    .columns(['project_id', 'created', 'id'])
    .execute();

  await db.schema.alterTable('webhook_deliveries').addColumn('endpoint_id', 'text').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('event_id', 'text').execute();
  await db.schema
    .createIndex('webhook_deliveries_endpoint_event')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'event_id'])
    .unique()
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_endpoint_created')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'created'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['webhook_endpoints', 'automation_runs', 'automations']) await db.schema.dropTable(t).execute();
}
