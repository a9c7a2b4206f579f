import { sql, type Kysely } from 'kysely';

// The outbox's index of events to dispatch holds only those (dispatched = 0): an event of a project
// with no automation and no webhook endpoint is recorded already dispatched (events/record.ts), and
// a dispatched event leaves the index in the transaction that dispatches it. Indexed in full, each
// of a task's events put an entry in it that no query reads: one page of a small task's SQLite WAL
// for each event (two a task), and an index insert for each on PostgreSQL. The dispatcher's reads
// say `dispatched = 0` as a literal, which a partial index needs on PostgreSQL's generic plans.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('events_undispatched').execute();
  await db.schema
    .createIndex('events_undispatched')
    .on('events')
    .columns(['dispatched', 'seq'])
    .where(sql.ref('dispatched'), '=', 0)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('events_undispatched').execute();
  await db.schema.createIndex('events_undispatched').on('events').columns(['dispatched', 'seq']).execute();
}
