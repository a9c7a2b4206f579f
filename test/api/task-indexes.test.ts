// The tasks table's partial indexes (migrations 019, 020) and the outbox's (021) serve the queries
// they were made for: each query below is run for real through Kysely, its SQL as sent is
// captured, and the database's own plan for that SQL must name the index. A status sent as a bound
// parameter instead of a literal proves nothing about a partial index's predicate, and the plan
// falls back to another index (a sort of every pending task for the claim). With MEDIAD_TEST_DATABASE_URL on PostgreSQL (generic
// plans, as the claim's connection runs them, and sequential scans off, as on a large table), else
// SQLite.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { migrate } from '../../src/db/connect.js';
import type { Database } from '../../src/db/schema.js';
import { anyUndispatched, undispatched } from '../../src/events/dispatcher.js';
import { claim, expiredLeases, heartbeat } from '../../src/queue/task-state.js';
import { filterTasks, retryCandidates } from '../../src/services/media/tasks.js';
import { testDatabase } from '../helpers/server.js';

let db: Kysely<Database>;
let dir: string;
let database: Awaited<ReturnType<typeof testDatabase>>;
let sqlite: SQLite.Database | null = null;
let client: pg.Client | null = null;
const sent: CompiledQuery[] = [];

before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-task-indexes-'));
  database = await testDatabase();
  const log = (e: { query: CompiledQuery }) => void sent.push(e.query);
  if (database) {
    db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 1 }) }),
      log,
    });
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  } else {
    sqlite = new SQLite(path.join(dir, 'db.sqlite'));
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }), log });
  }
  await migrate(db);
});

after(async () => {
  await db.destroy();
  await client?.end();
  await database?.drop();
  await fs.rm(dir, { recursive: true, force: true });
});

/** The plan the database makes for `q` (PostgreSQL: generic, without sequential scans), as text. */
async function plan(q: CompiledQuery): Promise<string> {
  if (sqlite) {
    const rows = sqlite.prepare(`explain query plan ${q.sql}`).all(...q.parameters) as { detail: string }[];
    return rows.map((r) => r.detail).join('\n');
  }
  const c = client!;
  await c.query('set plan_cache_mode = force_generic_plan; set enable_seqscan = off');
  await c.query(`prepare planned as ${q.sql}`);
  try {
    const args = q.parameters.map((p) => (typeof p === 'string' ? `'${p.replaceAll("'", "''")}'` : String(p)));
    const rows = await c.query<{ 'QUERY PLAN': string }>(
      `explain execute planned${args.length > 0 ? `(${args.join(', ')})` : ''}`,
    );
    return rows.rows.map((r) => r['QUERY PLAN']).join('\n');
  } finally {
    await c.query('deallocate planned; reset plan_cache_mode; reset enable_seqscan');
  }
}

/** The statements `run` sends, each with its plan. */
async function plansOf(run: () => Promise<unknown>): Promise<{ sql: string; plan: string }[]> {
  sent.length = 0;
  await run();
  const out: { sql: string; plan: string }[] = [];
  for (const q of [...sent]) out.push({ sql: q.sql, plan: await plan(q) }); // one prepared name at a time
  return out;
}

test('lease recovery reads processing tasks from tasks_lease', async () => {
  const [q] = await plansOf(() => expiredLeases(db, new Date()));
  assert.ok(q, 'expiredLeases sent no statement');
  assert.match(q.sql, /'processing'/, 'the status is a literal');
  assert.match(q.plan, /tasks_lease/);
});

test('a claim reads pending tasks from an index, never by sorting the queue', async () => {
  // An empty queue: on PostgreSQL the fair claim finds nothing and the claim of any due task runs too.
  const statements = await plansOf(() => claim(db, 'owner', 60_000, new Date()));
  assert.equal(statements.length, database ? 2 : 1);
  for (const s of statements) {
    assert.match(s.sql, /\bstatus"? = 'pending'/, 'the status is a literal');
    assert.match(s.plan, /tasks_status_project|tasks_claim/);
    assert.doesNotMatch(s.plan, /SCAN tasks\b|Seq Scan on tasks\b/);
  }
  // The claim of any due task (PostgreSQL only) orders the whole queue by run_after: tasks_claim does.
  if (database) assert.match(statements[1]!.plan, /tasks_claim/);
});

test("a claim's generic plan on PostgreSQL seeks: the next project, the claimed row and its input", async (t) => {
  if (!database) return t.skip('PostgreSQL only (MEDIAD_TEST_DATABASE_URL)');
  // The plan the claim's connection keeps is made once, often on a new database's first rows, so
  // each part must be an index seek whatever the statistics: the skip scan's steps (no aggregate
  // over the pending tasks, as min() was planned: twice a claim, ~400 buffers with 300 queued),
  // the row updated (by its primary key, not an index on status with a filter on the id: ~200
  // buffers) and the input file (by its primary key, not the project's files with a filter).
  const [fair] = await plansOf(() => claim(db, 'owner', 60_000, new Date()));
  const p = fair!.plan;
  assert.equal(p.match(/\bAggregate\b/g)?.length, 1, `only the running count aggregates:\n${p}`);
  assert.match(
    p,
    /Index Only Scan using tasks_status_project on tasks[^\n]*\n\s*Index Cond: \(status = 'pending'::text\)/,
  );
  assert.match(p, /Index Scan using tasks_pkey on tasks[^\n]*\n\s*Index Cond: \(id = \$\d+\)\n(?!\s*Filter)/);
  assert.match(p, /Index Scan using files_pkey on files f/);
});

test('a leased task is written by its id, not found through an index on its status', async (t) => {
  if (!database) return t.skip('PostgreSQL only (MEDIAD_TEST_DATABASE_URL)');
  // The lease guard of every transition out of processing (complete, fail, release, heartbeat):
  // with `status = $n` the generic plan chose tasks_status_project and filtered the processing tasks.
  const [q] = await plansOf(() => heartbeat(db, { id: 'task_x', lease_owner: 'owner' }, 60_000, new Date()));
  assert.match(q!.plan, /Index Scan using tasks_pkey on tasks[^\n]*\n\s*Index Cond: \(id = \$\d+\)/, q!.plan);
});

test("a workflow's steps are read from tasks_parent", async () => {
  const [q] = await plansOf(() => db.selectFrom('tasks').select('id').where('parent_id', '=', 'task_x').execute());
  assert.match(q!.plan, /tasks_parent/);
});

/** The definitions of the named indexes, as the database keeps them. */
async function indexDefs(names: string[]): Promise<string[]> {
  return sqlite
    ? (
        sqlite
          .prepare(`select sql from sqlite_master where type = 'index' and name in (${names.map(() => '?').join(',')})`)
          .all(...names) as { sql: string }[]
      ).map((r) => r.sql)
    : (
        await client!.query<{ indexdef: string }>('select indexdef from pg_indexes where indexname = any($1)', [names])
      ).rows.map((r) => r.indexdef);
}

test('the indexes are partial: completed tasks are in none of them', async () => {
  const names = ['tasks_claim', 'tasks_lease', 'tasks_project_failed', 'tasks_parent'];
  const defs = await indexDefs(names);
  assert.equal(defs.length, names.length);
  for (const d of defs) assert.match(d, /where/i, d);
});

test('the indexes on a column most tasks leave null hold only the tasks their queries look for', async () => {
  // Migration 020: a task made by no automation, retrying no task, or not yet completed has no
  // entry in these, and its claim and completion put none there either.
  const names = ['tasks_project_automation', 'tasks_retry_of', 'tasks_project_output'];
  const defs = await indexDefs(names);
  assert.equal(defs.length, names.length);
  for (const d of defs) assert.match(d, /where \(?"?(automation_id|retry_of|output_file_id)"? is not null\)?/i, d);
  // Each query that used them still does: its condition implies the column is not null.
  const [byAutomation] = await plansOf(() =>
    filterTasks(db, 'proj_x', { automation_id: 'auto_x' }).selectAll().execute(),
  );
  assert.match(byAutomation!.plan, /tasks_project_automation/, byAutomation!.plan);
  const [retry] = await plansOf(() => retryCandidates(db, 'proj_x', {}).execute());
  assert.match(retry!.plan, /tasks_retry_of/, retry!.plan);
});

test("the outbox's index holds only the events to dispatch, and the dispatcher's reads use it", async () => {
  // Migration 021: an event recorded dispatched (nothing consumes it) never enters it.
  const [def] = await indexDefs(['events_undispatched']);
  assert.match(def!, /where \(?"?dispatched"? = 0\)?/i, def);
  for (const read of [undispatched, anyUndispatched]) {
    const [q] = await plansOf(() => db.executeQuery(read(db)));
    assert.match(q!.sql, /\bdispatched = 0\b/, 'the flag is a literal');
    assert.match(q!.plan, /events_undispatched/, q!.plan);
  }
});

test('a claim reads the paused pairs from the pauses out, never by scanning the projects', async () => {
  // Joined from the projects, SQLite scanned every project twice a claim, paused or not (1.1 ms a
  // scan with 20,000 projects), and PostgreSQL read the projects' whole index once any kind was
  // paused: each paused organisation's projects are found by their index on org_id instead.
  const statements = await plansOf(() => claim(db, 'owner', 60_000, new Date()));
  for (const { plan: p } of statements) {
    const projects = p
      .split('\n')
      .flatMap((line, i, lines) => (/\bpp\b|on projects\b/.test(line) ? [[line, lines[i + 1] ?? '']] : []));
    assert.ok(projects.length > 0, `the claim reads no projects?\n${p}`);
    for (const [line, next] of projects) {
      if (sqlite) assert.match(line!, /^SEARCH pp USING INDEX \S+ \(org_id=\?\)/, p);
      else {
        assert.match(line!, /Index Scan using \S+ on projects p(_\d+)? /, p);
        assert.match(next!, /Index Cond: \(org_id = qp(_\d+)?\.org_id\)/, p);
      }
    }
  }
});
