import { type Kysely, SqliteAdapter, sql } from 'kysely';

// The request log in segments (db/request-log-segments.ts): a row per batch of one project's
// requests instead of a row per request, so recording writes a row a flush and retention deletes
// whole segments (a row inserted and a row deleted for every request cost the API ~10% of its
// throughput on its cheapest route). The rows of 008's table are carried over, 512 to a segment
// in the order they were written, encoded here in SQL as the codec does.
const SEGMENT_ROWS = 512;

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema
    .createTable('request_log_segments')
    .addColumn('seq', sqlite ? 'integer' : 'bigint', (c) =>
      sqlite ? c.primaryKey() : c.primaryKey().generatedByDefaultAsIdentity(),
    )
    .addColumn('project_id', 'text', (c) => c.notNull())
    // Ids are compared as the codec compares them, by code unit: PostgreSQL's default collation
    // (en_US and the like) would order 'a' before 'B'.
    .addColumn('first_id', 'text', (c) => (sqlite ? c : c.modifyFront(sql`collate "C"`)).notNull())
    .addColumn('last_id', 'text', (c) => (sqlite ? c : c.modifyFront(sql`collate "C"`)).notNull())
    .addColumn('first_created', 'text', (c) => c.notNull())
    .addColumn('last_created', 'text', (c) => c.notNull())
    .addColumn('rows', 'integer', (c) => c.notNull())
    .addColumn('n2xx', 'integer', (c) => c.notNull())
    .addColumn('n3xx', 'integer', (c) => c.notNull())
    .addColumn('n4xx', 'integer', (c) => c.notNull())
    .addColumn('n5xx', 'integer', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .execute();
  // A project's segments newest first (the list, retention); GET /requests/{id} finds the few
  // segments whose id range holds the id from the first one that ends at or after it.
  await db.schema
    .createIndex('request_log_segments_project')
    .on('request_log_segments')
    .columns(['project_id', 'seq'])
    .execute();
  await db.schema
    .createIndex('request_log_segments_last_id')
    .on('request_log_segments')
    .columns(['project_id', 'last_id'])
    .execute();

  const tab = sqlite ? sql`char(9)` : sql`chr(9)`;
  const nl = sqlite ? sql`char(10)` : sql`chr(10)`;
  const text = (e: ReturnType<typeof sql>) => (sqlite ? e : sql`cast(${e} as text)`);
  // Only the path is escaped (see the codec); created becomes milliseconds since 1970.
  const escaped = (col: ReturnType<typeof sql>) =>
    sql`replace(replace(replace(${col}, '\\', '\\\\'), ${tab}, '\\t'), ${nl}, '\\n')`;
  const line = sql.join(
    [
      sql.ref('id'),
      text(
        sqlite
          ? sql`cast(round((julianday(created) - 2440587.5) * 86400000.0) as integer)`
          : sql`cast(round(extract(epoch from cast(created as timestamptz)) * 1000) as bigint)`,
      ),
      sql.ref('method'),
      sql`coalesce(route, '')`,
      escaped(sql.ref('path')),
      text(sql.ref('status')),
      text(sql.ref('duration_ms')),
      sql.ref('actor'),
      sql`coalesce(key_id, user_id, '')`,
    ],
    sql` || ${tab} || `,
  );
  const joined = sqlite ? sql`group_concat(line, ${nl} order by seq)` : sql`string_agg(line, ${nl} order by seq)`;
  const count = (low: number) =>
    sql`sum(case when status >= ${sql.lit(low)} and status < ${sql.lit(low + 100)} then 1 else 0 end)`;
  await sql`
    insert into request_log_segments
      (project_id, first_id, last_id, first_created, last_created, rows, n2xx, n3xx, n4xx, n5xx, body)
    select project_id, min(id), max(id), min(created), max(created), count(*),
      ${count(200)}, ${count(300)}, ${count(400)}, ${count(500)}, ${joined}
    from (
      select project_id, seq, id, created, status, ${line} as line,
        (row_number() over (partition by project_id order by seq) - 1) / ${sql.lit(SEGMENT_ROWS)} as chunk
      from request_log
    ) as lines
    group by project_id, chunk
    order by min(seq)`.execute(db);
  await db.schema.dropTable('request_log').execute();
}

// Down recreates 008's table empty: the segments' requests are not carried back.
export async function down(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema.dropTable('request_log_segments').execute();
  await db.schema
    .createTable('request_log')
    .addColumn('seq', sqlite ? 'integer' : 'bigint', (c) =>
      sqlite ? c.primaryKey() : c.primaryKey().generatedByDefaultAsIdentity(),
    )
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
  await db.schema.createIndex('request_log_project').on('request_log').columns(['project_id', 'seq']).execute();
  await db.schema.createIndex('request_log_id').on('request_log').column('id').execute();
}
