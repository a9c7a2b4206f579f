import type { Kysely } from 'kysely';

// Administration: invitations to an organisation (only a hash of each token is stored), the
// audit log, and the deletion mark of organisations and projects (a deleted one disappears at
// once; its rows and blobs are removed by a background pass, services/operations/purge.ts).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('orgs').addColumn('deleted', 'text').execute();
  await db.schema.alterTable('projects').addColumn('deleted', 'text').execute();
  await db.schema.createIndex('projects_deleted').on('projects').column('deleted').execute();

  await db.schema
    .createTable('invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_by', 'text')
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('expires', 'text', (c) => c.notNull())
    .addColumn('accepted', 'text')
    .addColumn('accepted_by', 'text')
    .addColumn('revoked', 'text')
    .execute();
  await db.schema.createIndex('invitations_org').on('invitations').columns(['org_id', 'created']).execute();

  // No foreign keys: a record outlives what it names (a deleted project, a removed member).
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text')
    .addColumn('project_id', 'text')
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'text')
    .addColumn('details', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('created', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_log_org_created').on('audit_log').columns(['org_id', 'created']).execute();
  await db.schema.createIndex('audit_log_created').on('audit_log').column('created').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_log').execute();
  await db.schema.dropTable('invitations').execute();
  await db.schema.dropIndex('projects_deleted').execute();
  await db.schema.alterTable('projects').dropColumn('deleted').execute();
  await db.schema.alterTable('orgs').dropColumn('deleted').execute();
}
