import type { Kysely } from 'kysely';

// Data passes: work on stored rows that needs what a migration does not have (the secret key that
// seals http header values, services/media/stored-secrets.ts). Each pass records its name here once it
// has run, so a start after it costs one lookup.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('data_passes')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('done', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('data_passes').execute();
}
