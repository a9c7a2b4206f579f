import { type Kysely, SqliteAdapter } from 'kysely';

// Written once for both dialects: only types and statements SQLite and PostgreSQL share.
export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema
    .createTable('orgs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('projects')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('signing_secret', 'text', (c) => c.notNull())
    .addColumn('webhook_secret', 'text', (c) => c.notNull())
    .addColumn('require_signed_delivery', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created', 'text', (c) => c.notNull())
    .addUniqueConstraint('projects_org_name', ['org_id', 'name'])
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('hint', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('last_used', 'text')
    .addColumn('revoked', 'text')
    .execute();

  await db.schema
    .createTable('media')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('kind', 'text')
    .addColumn('title', 'text')
    .addColumn('alt', 'text')
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('duration', 'double precision')
    .addColumn('background', 'text')
    .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('updated', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('media_project_created').on('media').columns(['project_id', 'created', 'id']).execute();

  await db.schema
    .createTable('files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('media_id', 'text', (c) => c.notNull().references('media.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('format', 'text')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('duration', 'double precision')
    .addColumn('filesize', 'bigint', (c) => c.notNull())
    .addColumn('folder', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('ref', 'text')
    .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('updated', 'text', (c) => c.notNull())
    .addUniqueConstraint('files_project_path', ['project_id', 'folder', 'filename'])
    .execute();
  await db.schema.createIndex('files_project_created').on('files').columns(['project_id', 'created', 'id']).execute();
  await db.schema.createIndex('files_media').on('files').columns(['media_id', 'created']).execute();

  // The outbox: later issues drive automations and webhooks from these rows.
  await db.schema
    .createTable('events')
    .addColumn('seq', 'integer', (c) =>
      sqlite ? c.primaryKey().autoIncrement() : c.primaryKey().generatedAlwaysAsIdentity(),
    )
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_project_created').on('events').columns(['project_id', 'created']).execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('expires', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['project_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expires').on('idempotency_keys').column('expires').execute();

  // Exact list totals without counting rows: kept in the same transaction as inserts/deletes.
  await db.schema
    .createTable('counters')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('counters_pk', ['project_id', 'resource'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['counters', 'idempotency_keys', 'events', 'files', 'media', 'api_keys', 'projects', 'orgs']) {
    await db.schema.dropTable(t).execute();
  }
}
