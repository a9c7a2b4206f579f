import type { Kysely } from 'kysely';

// A project's default API version (Stripe-style pinning): the version of requests that name
// none. Existing and new projects start on the envelope generation (SPEC.md).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('projects')
    .addColumn('api_version', 'text', (c) => c.notNull().defaultTo('2025-07-01'))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('projects').dropColumn('api_version').execute();
}
