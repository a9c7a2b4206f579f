import type { Kysely } from 'kysely';

// A budget per causal chain (issue 20): the tasks that automations started for the work one root
// event (a client's upload, a task it made…) caused, and the automations skipped in it, recorded
// once per chain rather than once per event.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('chain_budgets')
    .addColumn('root', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('tasks', 'integer', (c) => c.notNull())
    .addColumn('created', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('chain_budgets_created').on('chain_budgets').columns(['created']).execute();
  await db.schema
    .createTable('chain_skips')
    .addColumn('root', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('automation_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('created', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('chain_skips_pk', ['root', 'reason', 'automation_id'])
    .execute();
  await db.schema.createIndex('chain_skips_created').on('chain_skips').columns(['created']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('chain_skips').execute();
  await db.schema.dropTable('chain_budgets').execute();
}
