// db/shape-template.ts: a statement whose number of rows varies, compiled once per shape of its
// values and reused with each call's values; a builder that reads its values (not only passes them
// on) and values that are not plain are built every time. And db/transact.ts's held-back writes
// through it: a second transaction of the same shape compiles none of them, and writes its own
// values. With MEDIAD_TEST_DATABASE_URL on a fresh PostgreSQL database too (the one statement of
// its last writes), else SQLite.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql, type CompiledQuery, type KyselyPlugin } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import { bumpCounter } from '../../src/db/queries/counters.js';
import { touchMedia } from '../../src/db/queries/media.js';
import { addUsage } from '../../src/db/queries/usage.js';
import { markValues, ShapeTemplates } from '../../src/db/shape-template.js';
import { transact } from '../../src/db/transact.js';
import { recordEvent } from '../../src/events/record.js';
import { unitDatabase } from '../helpers/server.js';

let db: Db;
let close: () => Promise<void>;
before(async () => ({ db, close } = await unitDatabase('mediad-shape-template-')));
after(() => close());

type Row = { project_id: string; resource: string; count: number };

/** `build` of `values` through `templates`, keyed by the values' shape (as db/transact.ts does). */
function viaTemplates<A>(templates: ShapeTemplates, values: A, build: (v: A) => CompiledQuery): CompiledQuery {
  const m = markValues(values)!;
  return templates.compile(
    db,
    m.shape,
    m.leaves,
    () => build(m.marked()),
    () => build(values),
  );
}
const insert = (rows: Row[]) => db.insertInto('counters').values(rows);

test('values are marked in order, with a shape that tells keys, lengths, types and nulls apart', () => {
  const a = markValues([{ a: 'x', b: 1, c: null }], 3);
  assert.ok(a);
  assert.deepEqual(a.leaves, ['x', 1]);
  assert.deepEqual(a.marked(), [{ a: '\u0000arg3\u0000', b: '\u0000arg4\u0000', c: null }]);
  const shapes = [
    [{ a: 'y', b: 2, c: null }],
    [{ a: 'x', b: 1, c: 'z' }],
    [{ a: 'x', b: '1', c: null }],
    [{ b: 1, a: 'x', c: null }],
    [
      { a: 'x', b: 1, c: null },
      { a: 'x', b: 1, c: null },
    ],
  ].map((v) => markValues(v)?.shape);
  assert.equal(shapes[0], a.shape, 'the same shape with other values');
  assert.equal(new Set(shapes.slice(1).concat(a.shape)).size, 5, 'each other shape differs');
  assert.equal(markValues([new Date()]), null);
  assert.equal(markValues({ at: sql`now()` }), null);
});

test('a statement is compiled once per shape and reused with the values of each call', async () => {
  const templates = new ShapeTemplates();
  let builds = 0;
  const compile = (rows: Row[]) => viaTemplates(templates, rows, (r) => (builds++, insert(r).compile()));
  const one = (p: string, n: number): Row => ({ project_id: p, resource: 'files', count: n });
  await db.executeQuery(compile([one('st1', 1)]));
  assert.equal(builds, 2, 'the first: built with its values, and with markers for the template');
  const q = compile([one('st2', 2)]);
  await db.executeQuery(q);
  assert.equal(builds, 2, 'the same shape: built no more');
  assert.deepEqual(q.parameters, insert([one('st2', 2)]).compile().parameters);
  assert.equal(q.sql, insert([one('st2', 2)]).compile().sql);
  await db.executeQuery(compile([one('st3', 3), one('st4', 4)]));
  assert.equal(builds, 4, 'two rows: another shape');
  await db.executeQuery(compile([one('st5', 5), one('st6', 6)]));
  assert.equal(builds, 4);
  const rows = await db
    .selectFrom('counters')
    .select(['project_id', 'count'])
    .where('project_id', 'like', 'st%')
    .orderBy('project_id')
    .execute();
  assert.deepEqual(
    rows.map((r) => [r.project_id, Number(r.count)]),
    [1, 2, 3, 4, 5, 6].map((n) => [`st${n}`, n]),
  );
});

test('a builder whose statement depends on its values fails the check and is built every time', () => {
  const templates = new ShapeTemplates();
  let builds = 0;
  // Reads a value: a statement for 0 differs from the others, which a template would hide.
  const build = (n: number) => {
    builds++;
    return (
      n === 0 ? db.selectFrom('counters').select('count') : db.selectFrom('counters').select('count').limit(n)
    ).compile();
  };
  const compile = (n: number) => viaTemplates(templates, n, build);
  assert.equal(compile(0).sql, build(0).sql);
  builds = 0;
  assert.equal(compile(5).sql, build(5).sql);
  assert.equal(builds, 2, 'built with its values each time (and once more here to compare)');
});

test('held-back writes of the same shape compile nothing in a second transaction, and write its values', async () => {
  let compiled = 0;
  const counting: KyselyPlugin = {
    transformQuery: (args) => (compiled++, args.node),
    transformResult: async (args) => args.result,
  };
  const counted = db.withPlugin(counting);
  const at = (h: number) => `2026-12-02T${String(h).padStart(2, '0')}:00:00.000Z`;
  const writes = (project: string, n: number) =>
    transact(counted, async (trx) => {
      await bumpCounter(trx, project, 'files', n);
      await addUsage(trx, [{ projectId: project, at: at(n), metric: 'tasks:completed', delta: n }]);
      await touchMedia(trx, `med_${project}`, at(n));
      await recordEvent(trx, project, 'file.created', { n }, at(n));
    });
  await writes('sh1', 1);
  assert.ok(compiled > 0);
  compiled = 0;
  await writes('sh2', 2);
  await writes('sh3', 3);
  assert.equal(compiled, 0, 'the second and third transactions built no statement');
  for (const [p, n] of [
    ['sh2', 2],
    ['sh3', 3],
  ] as const) {
    const counter = await db.selectFrom('counters').select('count').where('project_id', '=', p).executeTakeFirst();
    assert.equal(Number(counter?.count), n);
    const used = await db
      .selectFrom('usage_counters')
      .select(['bucket', 'value'])
      .where('project_id', '=', p)
      .where('period', '=', 'h')
      .executeTakeFirst();
    assert.deepEqual([used?.bucket, Number(used?.value)], [at(n).slice(0, 13), n]);
    const event = await db.selectFrom('events').select(['type', 'data']).where('project_id', '=', p).executeTakeFirst();
    const data: unknown = typeof event?.data === 'string' ? JSON.parse(event.data) : event?.data;
    assert.deepEqual([event?.type, data], ['file.created', { n }]);
  }
});
