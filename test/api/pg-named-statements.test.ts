// On PostgreSQL the queries compiled once (db/compiled.ts) are named statements (db/prepared.ts):
// each connection parses and plans them once, then runs them with new values. Other queries stay
// unnamed. Runs against MEDIAD_TEST_DATABASE_URL (or the local default) on a database of its own.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { connect, migrate, type Db } from '../../src/db/connect.js';
import { compiledTemplate } from '../../src/db/compiled.js';
import { LAST_WRITES, REPEATED_NAMES, withNamedStatements } from '../../src/db/prepared.js';
import type { Database } from '../../src/db/schema.js';
import { freePort } from '../helpers/server.js';

const ADMIN = process.env.MEDIAD_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NAME = `mediad_named_${process.pid}`;

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: ADMIN });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

let reachable = true;
let db: Db | undefined;
before(async () => {
  try {
    await admin((c) => c.query(`CREATE DATABASE ${NAME}`));
  } catch {
    reachable = false;
    return;
  }
  const url = new URL(ADMIN);
  url.pathname = `/${NAME}`;
  // One connection: the session whose prepared statements the test reads.
  db = connect({ dialect: 'postgres', url: url.toString(), poolSize: 1 });
  await migrate(db);
  await db
    .insertInto('counters')
    .values([
      { project_id: 'p1', resource: 'files', count: 3 },
      { project_id: 'p2', resource: 'files', count: 5 },
    ])
    .execute();
});
after(async () => {
  await db?.destroy();
  if (reachable) await admin((c) => c.query(`DROP DATABASE IF EXISTS ${NAME} WITH (FORCE)`));
});

const countOf = compiledTemplate(
  (d: Db, project: string) =>
    d.selectFrom('counters').select('count').where('project_id', '=', project).where('resource', '=', 'files'),
  1,
);

test('a query compiled once runs as a named statement, with each call’s values', async (t) => {
  if (!db) return t.skip('PostgreSQL is not reachable');
  const read = async (project: string) => Number((await db!.executeQuery(countOf(db!, project))).rows[0]?.count);
  assert.equal(await read('p1'), 3);
  assert.equal(await read('p2'), 5);
  assert.equal(await read('p1'), 3);
  // An ordinary query on the same connection: sent unnamed, so not kept by the session.
  await db.selectFrom('counters').select('count').where('project_id', '=', 'p2').execute();
  const { rows } = await sql<{
    name: string;
    statement: string;
  }>`select name, statement from pg_prepared_statements`.execute(db);
  const sqlText = countOf(db, 'x').sql;
  const named = rows.filter((r) => r.statement === sqlText);
  assert.equal(named.length, 1, `the template's SQL is prepared once: ${JSON.stringify(rows)}`);
  assert.match(named[0]!.name, /^mediad_\d+$/);
  assert.ok(
    rows.every((r) => r.name.startsWith('mediad_')),
    'only the compiled-once queries are named',
  );
});

// `select *` of a table that gained a column since the statement was prepared: PostgreSQL refuses
// the cached plan ("cached plan must not change result type"), as in a rolling upgrade whose new
// version migrated first.
const rowOf = compiledTemplate(
  (d: Db, project: string) => d.selectFrom('counters').selectAll().where('project_id', '=', project),
  1,
);

test('a named statement whose table changed shape is prepared again, at once outside a transaction', async (t) => {
  if (!db) return t.skip('PostgreSQL is not reachable');
  const read = async (d: Db) => (await d.executeQuery(rowOf(d, 'p1'))).rows[0]!;
  assert.equal((await read(db)).count, 3);
  await sql`alter table counters add column note_a text`.execute(db);
  assert.ok('note_a' in (await read(db)), 'sent again under a new name, the new column read');
  // Inside a transaction PostgreSQL aborts it; the next one (a caller's retry) runs.
  await sql`alter table counters add column note_b text`.execute(db);
  await assert.rejects(
    db.transaction().execute((trx) => read(trx)),
    (err: Error & { code?: string }) => err.code === '0A000',
  );
  assert.ok('note_b' in (await db.transaction().execute((trx) => read(trx))));
});

// The task claim runs with a generic plan, on a connection of its own: PostgreSQL otherwise plans
// it for every call's values. A template marked like it reads that connection's prepared statements.
const genericSession = compiledTemplate(
  (d: Db, like: string) =>
    d
      .selectFrom(
        sql<{
          name: string;
          statement: string;
          generic_plans: number;
          custom_plans: number;
        }>`pg_prepared_statements`.as('p'),
      )
      .select(['p.name', 'p.statement', 'p.generic_plans', 'p.custom_plans'])
      .where('p.statement', 'like', like),
  1,
  { genericPlan: true },
);

/** How the claim's statement starts on PostgreSQL: the update, with the input file's row read beside it. */
const CLAIM = 'with "claimed" as (update "tasks" set "status"';

test('the task claim is planned once: generic plans on its own connection, outside transactions only', async (t) => {
  if (!db) return t.skip('PostgreSQL is not reachable');
  const { claim } = await import('../../src/queue/task-state.js');
  for (let i = 0; i < 7; i++) assert.equal(await claim(db, 'w', 30_000, new Date()), undefined);
  const claims = (await db.executeQuery(genericSession(db, `${CLAIM}%`))).rows;
  assert.ok(claims.length >= 1, 'the claim was prepared on the generic connection');
  for (const c of claims) {
    assert.equal(Number(c.custom_plans), 0, `no plan for the values: ${JSON.stringify(c)}`);
    assert.ok(Number(c.generic_plans) >= 1);
  }
  // The pool's own connection never prepared it, and its ordinary queries keep custom plans.
  const own = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db);
  assert.ok(!own.rows.some((r) => r.statement.startsWith(CLAIM)));
  const mode = await sql<{ plan_cache_mode: string }>`show plan_cache_mode`.execute(db);
  assert.equal(mode.rows[0]!.plan_cache_mode, 'auto', 'the pool keeps PostgreSQL’s choice');
  // Inside a transaction the statement stays on the transaction's connection.
  await db.transaction().execute(async (trx) => {
    await claim(trx, 'w', 30_000, new Date());
    const inTrx = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(trx);
    assert.ok(inTrx.rows.some((r) => r.statement.startsWith(CLAIM)));
  });
});

// A template marked like the claim runs where the claim runs; one not marked, on the pool.
const settingsOnClaimConnection = compiledTemplate(
  (d: Db) =>
    d.selectNoFrom([
      sql<string>`current_setting('jit')`.as('jit'),
      sql<string>`current_setting('plan_cache_mode')`.as('plan_cache_mode'),
    ]),
  0,
  { genericPlan: true },
);

test('no connection of mediad’s compiles its statements (JIT), the claim’s included', async (t) => {
  if (!db) return t.skip('PostgreSQL is not reachable');
  // A generic plan made without statistics estimated the claim at a million, past jit_above_cost:
  // with JIT on, every claim then compiled itself for 640 ms to run for under one.
  const onPool = await sql<{ jit: string }>`select current_setting('jit') as jit`.execute(db);
  assert.equal(onPool.rows[0]!.jit, 'off');
  const [onClaims] = (await db.executeQuery(settingsOnClaimConnection(db))).rows;
  assert.deepEqual(onClaims, { jit: 'off', plan_cache_mode: 'force_generic_plan' });
});

test('without the connection of generic plans (a pooler refusing its startup option, say) the claim runs as before', async (t) => {
  if (!db) return t.skip('PostgreSQL is not reachable');
  const url = new URL(ADMIN);
  url.pathname = `/${NAME}`;
  const closed = new URL(url);
  closed.port = String(await freePort());
  const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
  // pool.end() resolves before its connection has closed: the database's forced drop (after) may
  // still end that connection, whose error must not become the process's uncaught exception.
  pool.on('error', () => undefined);
  const refused = new pg.Pool({ connectionString: closed.toString(), max: 1 });
  refused.on('error', () => undefined);
  const fallback = new Kysely<Database>({ dialect: new PostgresDialect({ pool: withNamedStatements(pool, refused) }) });
  try {
    const { claim } = await import('../../src/queue/task-state.js');
    for (let i = 0; i < 3; i++) assert.equal(await claim(fallback, 'w', 30_000, new Date()), undefined);
    const own = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(fallback);
    assert.ok(
      own.rows.some((r) => r.statement.startsWith(CLAIM)),
      'run on the pool',
    );
    // A transaction's last writes too, named once repeated: the refused connection ran nothing.
    const bump = () =>
      fallback
        .transaction()
        .execute((trx) =>
          sql`${sql.raw(LAST_WRITES)}update counters set count = count + 1 where project_id = 'p2' and resource = 'refused-fallback'`.execute(
            trx,
          ),
        );
    for (let i = 0; i < 3; i++) await bump();
    const named = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(fallback);
    assert.ok(named.rows.some((r) => r.statement.includes('refused-fallback')));
  } finally {
    await fallback.destroy();
  }
});

// A transaction's BEGIN waits for its first statement (db/prepared.ts): when that statement is the
// transaction's last writes (db/transact.ts' LAST_WRITES), it is sent alone, without BEGIN and
// COMMIT. PostgreSQL's clocks tell which: a statement alone starts its own transaction. Each probe's
// text is new (its number), so it is never named: node-postgres sends an unnamed statement without
// values as a simple query, which reads the clock once; a named one goes as Parse, Bind and Execute,
// each reading it, so the two clocks differ even alone.
let probes = 0;
const alone = (d: Db) =>
  sql<{
    alone: boolean;
  }>`${sql.raw(LAST_WRITES)}select ${sql.raw(String(probes++))} as probe, statement_timestamp() = transaction_timestamp() as alone`.execute(
    d,
  );

test('a transaction whose one statement is its last writes sends it alone; any other begins first', async (t) => {
  if (!db) return t.skip('PostgreSQL is not reachable');
  const only = await db.transaction().execute(async (trx) => (await alone(trx)).rows[0]!.alone);
  assert.equal(only, true, 'the last writes alone: no BEGIN before them');
  const after = await db.transaction().execute(async (trx) => {
    await sql`select 1`.execute(trx);
    return (await alone(trx)).rows[0]!.alone;
  });
  assert.equal(after, false, 'a statement before: the transaction began with it');
  // Sent alone and failing, it took its writes with it.
  const count = async () =>
    (await db!.selectFrom('counters').select('count').where('project_id', '=', 'p1').executeTakeFirstOrThrow()).count;
  const before = await count();
  await assert.rejects(
    db.transaction().execute(async (trx) => {
      await sql`${sql.raw(LAST_WRITES)}with w as (update counters set count = count + 1 where project_id = 'p1' returning 1) select 1 / (count(*) - 1) from w`.execute(
        trx,
      );
    }),
    (err: Error & { code?: string }) => err.code === '22012',
  );
  assert.equal(await count(), before, 'its update was rolled back with it');
  // An empty transaction sends nothing and leaves nothing open.
  await db.transaction().execute(async () => undefined);
  assert.equal((await alone(db)).rows[0]!.alone, true);
});

// A transaction's last writes are put together anew each time, but a kind's task completion makes
// the same text every time: seen a second time, it is named and prepared, up to REPEATED_NAMES
// texts a process (each is a prepared statement on every connection that runs it). Sent alone,
// a named text runs on the connection with generic plans: PostgreSQL otherwise planned the small
// tasks' completion at every bind.
test('last writes whose text repeats are named, a bounded number of them; a text seen once is not', async (t) => {
  if (!db) return t.skip('PostgreSQL is not reachable');
  const lastWrites = (d: Db, tag: number, project: string) =>
    sql<{
      count: number;
    }>`${sql.raw(LAST_WRITES)}select count, ${sql.raw(String(tag))} as tag from counters where project_id = ${project} and resource = 'files'`.execute(
      d,
    );
  const run = (tag: number, project: string) =>
    db!.transaction().execute(async (trx) => (await lastWrites(trx, tag, project)).rows[0]!.count);
  const prepared = async () =>
    (await db!.executeQuery(genericSession(db!, '%as tag from counters%'))).rows.map((r) => r.statement);
  const named = async (tag: number) => (await prepared()).some((s) => s.includes(`, ${tag} as tag`));
  const count = async (project: string) =>
    (
      await db!
        .selectFrom('counters')
        .select('count')
        .where('project_id', '=', project)
        .where('resource', '=', 'files')
        .executeTakeFirstOrThrow()
    ).count;

  assert.equal(await run(0, 'p1'), await count('p1'));
  assert.equal(await named(0), false, 'seen once: sent unnamed');
  assert.equal(await run(0, 'p2'), await count('p2'), 'seen again, with this call’s values');
  assert.equal(await named(0), true, 'seen again: named and prepared');
  assert.equal(await run(0, 'p1'), await count('p1'), 'the prepared statement runs with each call’s values');
  for (let i = 0; i < 6; i++) await run(0, i % 2 ? 'p1' : 'p2');
  const [plans] = (await db.executeQuery(genericSession(db, '%, 0 as tag from counters%'))).rows;
  assert.deepEqual(
    [Number(plans?.custom_plans), Number(plans?.generic_plans) >= 8],
    [0, true],
    'planned once, without the values',
  );
  const own = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db);
  assert.ok(!own.rows.some((r) => r.statement.includes(' as tag from counters')), 'not on the pool’s connection');

  const last = REPEATED_NAMES + 8;
  for (let tag = 1; tag <= last; tag++) for (const p of ['p1', 'p2']) assert.equal(await run(tag, p), await count(p));
  const texts = await prepared();
  assert.ok(texts.length <= REPEATED_NAMES, `at most ${REPEATED_NAMES} named: ${texts.length}`);
  assert.equal(await named(last), false, 'past the bound, repeated texts stay unnamed');
});
