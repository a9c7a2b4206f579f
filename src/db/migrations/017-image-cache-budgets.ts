import type { Kysely } from 'kysely';

// A per-project budget for the image-URL cache (issue 24): the project's own byte budget (null:
// the server's MEDIAD_IMAGE_URL_PROJECT_CACHE_BYTES), and an index that lets a project's
// least recently used results, and its usage, be read without scanning other projects' rows.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('image_url_settings').addColumn('cache_bytes', 'bigint').execute();
  await db.schema
    .createIndex('image_derivatives_project_used')
    .on('image_derivatives')
    .columns(['project_id', 'last_used'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('image_derivatives_project_used').execute();
  await db.schema.alterTable('image_url_settings').dropColumn('cache_bytes').execute();
}
