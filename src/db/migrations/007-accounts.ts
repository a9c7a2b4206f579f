import type { Kysely } from 'kysely';

// People: users with password sign-in, their memberships (a role per organisation), their
// sessions (only a hash of each session token is stored, like API keys), the first-run setup
// token; and what API keys gain: scopes, an expiry, pausing, who made them.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('theme', 'text', (c) => c.notNull().defaultTo('system'))
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('updated', 'text', (c) => c.notNull())
    .addColumn('last_sign_in', 'text')
    .execute();

  await db.schema
    .createTable('memberships')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('memberships_pk', ['user_id', 'org_id'])
    .execute();
  await db.schema.createIndex('memberships_org').on('memberships').columns(['org_id', 'role']).execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('ip', 'text')
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('last_seen', 'text', (c) => c.notNull())
    .addColumn('expires', 'text', (c) => c.notNull())
    .addColumn('revoked', 'text')
    .execute();
  await db.schema.createIndex('sessions_user').on('sessions').columns(['user_id', 'revoked']).execute();

  await db.schema
    .createTable('setup_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('used', 'text')
    .execute();

  // JSON array of scopes (null: full access, as every key made before scopes existed).
  await db.schema.alterTable('api_keys').addColumn('scopes', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('expires', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('paused', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('created_by', 'text').execute();
  await db.schema.createIndex('api_keys_project').on('api_keys').columns(['project_id', 'created']).execute();

  // The library's filters (kind, folder, created range) and search stay on indexes at 100,000 media.
  await db.schema.createIndex('media_project_kind').on('media').columns(['project_id', 'kind', 'created']).execute();
  await db.schema.createIndex('files_project_folder').on('files').columns(['project_id', 'folder']).execute();
  await db.schema.createIndex('files_project_ref').on('files').columns(['project_id', 'ref']).execute();
  await db.schema.createIndex('tasks_project_media').on('tasks').columns(['project_id', 'input_file_id']).execute();
  await db.schema.alterTable('tasks').addColumn('retry_of', 'text').execute();
  await db.schema.createIndex('tasks_project_output').on('tasks').columns(['project_id', 'output_file_id']).execute();
  // The dashboard's failures of the last day.
  await db.schema
    .createIndex('tasks_project_failed')
    .on('tasks')
    .columns(['project_id', 'status', 'finished'])
    .execute();
  await db.schema.createIndex('tasks_retry_of').on('tasks').column('retry_of').execute();
  await db.schema
    .createIndex('tasks_project_automation')
    .on('tasks')
    .columns(['project_id', 'automation_id', 'created'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['setup_tokens', 'sessions', 'memberships', 'users']) await db.schema.dropTable(t).execute();
}
