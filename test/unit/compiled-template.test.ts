// db/compiled.ts's compiledTemplate: a query built once with marker values, reused with each
// call's values where the markers were — also where an argument appears several times (the
// task claim's time), and in a transaction as on the database it was made for.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { connect, migrate, type Db } from '../../src/db/connect.js';
import { compiledTemplate } from '../../src/db/compiled.js';

let db: Db;
let dir: string;
before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-compiled-'));
  db = connect({ dialect: 'sqlite', file: path.join(dir, 'db.sqlite') });
  await migrate(db);
  await db
    .insertInto('counters')
    .values([
      { project_id: 'p1', resource: 'files', count: 3 },
      { project_id: 'p2', resource: 'files', count: 5 },
      { project_id: 'p2', resource: 'tasks', count: 7 },
    ])
    .execute();
});
after(async () => {
  await db.destroy();
  await fs.rm(dir, { recursive: true, force: true });
});

// `project` twice (a where and a selected expression), `resource` once, and a constant between them.
let builds = 0;
const countOf = compiledTemplate((d: Db, project: string, resource: string) => {
  builds++;
  return d
    .selectFrom('counters')
    .select(['count', sql<string>`${project} || ':' || ${'x'}`.as('tag')])
    .where('project_id', '=', project)
    .where('resource', '=', resource);
}, 2);

test('each call gets its own values in every place its arguments appear; built once', async () => {
  const run = async (d: Db, p: string, r: string) => (await d.executeQuery(countOf(d, p, r))).rows;
  assert.deepEqual(await run(db, 'p1', 'files'), [{ count: 3, tag: 'p1:x' }]);
  assert.deepEqual(await run(db, 'p2', 'tasks'), [{ count: 7, tag: 'p2:x' }]);
  await db.transaction().execute(async (trx) => {
    assert.deepEqual(await run(trx, 'p2', 'files'), [{ count: 5, tag: 'p2:x' }]);
  });
  assert.deepEqual(await run(db, 'p3', 'files'), []);
  assert.equal(builds, 1, 'built once, for the database and its transactions');
});

test('refuses a builder that leaves an argument out of the query', () => {
  const missing = compiledTemplate(
    (d: Db, project: string, _unused: string) =>
      d.selectFrom('counters').select('count').where('project_id', '=', project),
    2,
  );
  assert.throws(() => missing(db, 'p1', 'files'), /every argument must appear/);
});
