import type { Kysely } from 'kysely';

// Resumable uploads (issue 25): each tus upload belongs to the project of the credential that
// created it, holds the file fields checked at creation, and, once its last byte arrived, the
// file it became. Short-lived upload tokens (mdu_…) let a browser upload without an API key;
// only their SHA-256 is stored.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('uploads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('length', 'bigint')
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('file_id', 'text')
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('expires', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('uploads_expires').on('uploads').columns(['expires']).execute();
  await db.schema
    .createTable('upload_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('expires', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('upload_tokens_expires').on('upload_tokens').columns(['expires']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('upload_tokens').execute();
  await db.schema.dropTable('uploads').execute();
}
