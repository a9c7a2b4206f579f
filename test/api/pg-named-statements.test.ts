// On PostgreSQL the queries compiled once (db/compiled.ts) are named statements (db/prepared.ts):
// each connection parses and plans them once, then runs them with new values. Other queries stay
// unnamed. Runs against MEDIAD_TEST_DATABASE_URL (or the local default) on a database of its own.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { connect, migrate, type Db } from '../../src/db/connect.js';
import { compiledTemplate } from '../../src/db/compiled.js';

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
