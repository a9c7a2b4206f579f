import type { Kysely } from 'kysely';

// On-the-fly image URLs (issue 24): each project's image-URL key and settings, its named presets,
// and the bookkeeping of cached results (the bytes live in the blob store under image-cache/).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('image_url_settings')
    .addColumn('project_id', 'text', (c) => c.primaryKey())
    /** The imk_… key, sealed (secrets/sealer.ts): HMAC needs the key itself, so it cannot be hashed. */
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('key_previous', 'text')
    .addColumn('key_rotated', 'text')
    .addColumn('key_created', 'text', (c) => c.notNull())
    .addColumn('allow_unsigned_presets', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('image_presets')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    /** The canonical options string (width:320,height:180,…). */
    .addColumn('options', 'text', (c) => c.notNull())
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('updated', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('image_presets_pk', ['project_id', 'name'])
    .execute();
  await db.schema
    .createTable('image_derivatives')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('file_id', 'text', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('last_used', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('image_derivatives_file').on('image_derivatives').columns(['file_id']).execute();
  await db.schema.createIndex('image_derivatives_used').on('image_derivatives').columns(['last_used']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['image_derivatives', 'image_presets', 'image_url_settings']) await db.schema.dropTable(t).execute();
}
