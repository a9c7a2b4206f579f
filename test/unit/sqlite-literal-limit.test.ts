// SQLite's compiler writes a LIMIT that is a number into the statement (db/sqlite-compiler.ts):
// SQLite re-prepares a statement whose LIMIT is bound at every run. OFFSET stays a parameter, and a
// LIMIT that is an argument of a compiledTemplate stays one too.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { compiledTemplate } from '../../src/db/compiled.js';
import { connect, migrate, type Db } from '../../src/db/connect.js';

let db: Db;
before(async () => {
  db = connect({ dialect: 'sqlite', file: ':memory:' });
  await migrate(db);
});
after(() => db.destroy());

test('a LIMIT that is a number is written into the statement; OFFSET is bound', async () => {
  const one = db.selectFrom('events').select('seq').where('project_id', '=', 'prj_x').limit(1);
  const compiled = one.compile();
  assert.match(compiled.sql, / limit 1$/);
  assert.deepEqual(compiled.parameters, ['prj_x']);
  assert.deepEqual(await one.execute(), []);

  const page = db.selectFrom('tasks').select('id').orderBy('created').limit(20).offset(40).compile();
  assert.match(page.sql, / limit 20 offset \?$/);
  assert.deepEqual(page.parameters, [40]);
});

test("a compiledTemplate's LIMIT argument stays a parameter, and takes each call's value", async () => {
  const firstTasks = compiledTemplate(
    (d: Db, project: string, n: number) =>
      d.selectFrom('tasks').select('id').where('project_id', '=', project).limit(n),
    2,
  );
  const q = firstTasks(db, 'prj_x', 5);
  assert.match(q.sql, / limit \?$/);
  assert.deepEqual(q.parameters, ['prj_x', 5]);
  assert.deepEqual((await db.executeQuery(q)).rows, []);
});
