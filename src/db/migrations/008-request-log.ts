import { type Kysely, SqliteAdapter } from 'kysely';

// The request log (one row per API request that reached a project, written in batches) and the
// usage counters (a value per project, metric and UTC hour or day, added to where it happens).
export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema
    .createTable('request_log')
    // The order rows were written in: monotonic, it orders and pages the log and bounds pruning.
    // On SQLite the rowid itself, so the table is appended to, not inserted into at random.
    .addColumn('seq', sqlite ? 'integer' : 'bigint', (c) =>
      sqlite ? c.primaryKey() : c.primaryKey().generatedByDefaultAsIdentity(),
    )
    // The request's own id (x-request-id, meta.request_id): time-ordered (ids.ts), so its index
    // is appended to as well.
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('route', 'text')
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('duration_ms', 'double precision', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('user_id', 'text')
    .addColumn('actor', 'text', (c) => c.notNull())
    .execute();
  // The only indexes every insert pays for: a project's rows newest first (the list, its filters,
  // pruning by age and to the row limit) and GET /requests/{id}. The age cut across projects
  // walks seq from the oldest row and stops at the first young one.
  await db.schema.createIndex('request_log_project').on('request_log').columns(['project_id', 'seq']).execute();
  await db.schema.createIndex('request_log_id').on('request_log').column('id').execute();

  await db.schema
    .createTable('usage_counters')
    .addColumn('project_id', 'text', (c) => c.notNull())
    // 'h': bucket is YYYY-MM-DDTHH; 'd': YYYY-MM-DD (UTC).
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('metric', 'text', (c) => c.notNull())
    .addColumn('value', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_counters_pk', ['project_id', 'period', 'bucket', 'metric'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['usage_counters', 'request_log']) await db.schema.dropTable(t).execute();
}
