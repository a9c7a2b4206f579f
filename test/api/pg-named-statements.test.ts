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
