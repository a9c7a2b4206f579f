import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { migrate, openDatabase } from '../../src/db/connect.js';
import { bumpCounter } from '../../src/db/queries/counters.js';
import { readCounter, readFilesPageJson } from '../../src/db/hot-reads.js';
import { toFileObject } from '../../src/shapes/files.js';

/** A files row of a project, created at `at` (foreign keys are off in these tests). */
function fileRow(projectId: string, id: string, at: string) {
  return {
    id,
    project_id: projectId,
    media_id: 'med_x',
    kind: 'image',
    format: 'png',
    type: 'image/png',
    width: 2,
    height: 2,
    duration: null,
    filesize: 10,
    folder: '',
    filename: `${id}.png`,
    ref: null,
    metadata: '{}',
    status: 'ready',
    blob_key: `projects/${projectId}/files/${id}`,
    probe: null,
    created: at,
    updated: at,
  };
}

/**
 * Opens a transaction that adds delta to a counter and stays open (across real waits, as one
 * awaiting I/O would) until release(); it then rolls back, so tx rejects with "roll back".
 */
async function openBump(
  db: Kysely<Database>,
  projectId: string,
  delta: number,
): Promise<{ tx: Promise<void>; release: () => void }> {
  let inside!: () => void;
  const opened = new Promise<void>((resolve) => (inside = resolve));
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const tx = db.transaction().execute(async (trx) => {
    await bumpCounter(trx, projectId, 'files', delta);
    inside();
    await held;
    throw new Error('roll back');
  });
  await opened;
  return { tx, release };
}

// The main connection's reads: rows read as arrays and rebuilt as objects, and compiled reads
// (in memory, with no reader thread) that wait for an open transaction like any other query.
describe('SQLite fast reads', async () => {
  const database = openDatabase({ dialect: 'sqlite', file: ':memory:' });
  const { db } = database;
  await migrate(db);
  await db.executeQuery(sql`pragma foreign_keys = off`.compile(db));
  after(() => database.close());

  it('rebuilds rows as plain objects with every column, nulls and numbers intact', async () => {
    const { rows } = await sql<{
      a: number;
      b: string | null;
      c: number;
      __x: string;
    }>`select 1 as a, null as b, 2.5 as c, 'y' as "__x"`.execute(db);
    assert.deepEqual(rows, [{ a: 1, b: null, c: 2.5, __x: 'y' }]);
    assert.equal(Object.getPrototypeOf(rows[0]), Object.prototype);
  });

  it("a column named __proto__ never becomes a row's prototype", async () => {
    const { rows } = await sql<Record<string, unknown>>`select ${sql.lit('{}')} as "__proto__", 1 as a`.execute(db);
    assert.equal(Object.getPrototypeOf(rows[0]), Object.prototype);
    assert.equal(rows[0]!.a, 1);
  });

  it('a compiled read on the main connection waits for an open transaction and never sees its writes', async () => {
    assert.equal(database.reader, null, 'an in-memory database has no reader thread');
    await db.transaction().execute((trx) => bumpCounter(trx, 'prj_sync', 'files', 5));
    assert.equal(await readCounter(database, 'prj_sync', 'files'), 5);

    const { tx, release } = await openBump(db, 'prj_sync', 1);
    // A read now must neither see the uncommitted +1 nor run inside that transaction: it waits.
    let readValue: number | undefined;
    const read = readCounter(database, 'prj_sync', 'files').then((v) => (readValue = v));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(readValue, undefined, 'the read waited for the transaction');
    release();
    await assert.rejects(tx, /roll back/);
    await read;
    assert.equal(readValue, 5, 'the rolled-back +1 was never visible');
  });

  it('a cached select * follows a schema change made by another connection', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'mediad-sqlite-'));
    const file = path.join(dir, 'db.sqlite');
    const ours = openDatabase({ dialect: 'sqlite', file });
    const other = new SQLite(file);
    try {
      other.exec(`create table t (a integer); insert into t values (1)`);
      const all = () => sql<Record<string, unknown>>`select * from t`.execute(ours.db).then((r) => r.rows);
      assert.deepEqual(await all(), [{ a: 1 }]);
      other.exec(`alter table t add column b text default 'x'`); // as a newer mediad migrating would
      assert.deepEqual(await all(), [{ a: 1, b: 'x' }]);
    } finally {
      other.close();
      await ours.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

// A SQLite file database answers its compiled reads from a second connection on a thread of
// its own; what a read sees must be exactly what the main connection would have shown.
describe('SQLite reader thread', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mediad-reader-'));
  const file = path.join(dir, 'db.sqlite');
  const database = openDatabase({ dialect: 'sqlite', file });
  const { db } = database;
  const readerThread = () => database.reader;
  await migrate(db);
  await db.executeQuery(sql`pragma foreign_keys = off`.compile(db));
  after(async () => {
    await database.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers compiled reads, and sees each commit at once', async () => {
    const reader = readerThread();
    assert.ok(reader?.usable, 'a SQLite file database has a reader thread');
    // Inside a transaction a read is given the transaction's handle, with no reader: it stays on that connection.
    await db.transaction().execute(async (trx) => {
      await bumpCounter(trx, 'prj_in', 'files', 1);
      assert.equal(
        await readCounter({ db: trx, reader: null }, 'prj_in', 'files'),
        1,
        'the transaction sees its own write',
      );
      assert.equal(await readCounter(database, 'prj_in', 'files'), 0, 'the reader thread does not');
    });
    await db.deleteFrom('counters').where('project_id', '=', 'prj_in').execute();
    assert.equal(await readCounter(database, 'prj_t', 'files'), 0);
    for (let i = 1; i <= 3; i++) {
      await db.transaction().execute((trx) => bumpCounter(trx, 'prj_t', 'files', 1));
      assert.equal(await readCounter(database, 'prj_t', 'files'), i, 'a read made after a commit sees it');
    }
    // Many reads in one turn of the event loop travel as one batch and each gets its own answer.
    await db.transaction().execute((trx) => bumpCounter(trx, 'prj_u', 'files', 7));
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => readCounter(database, i % 2 ? 'prj_t' : 'prj_u', 'files')),
    );
    assert.deepEqual(
      answers,
      Array.from({ length: 50 }, (_, i) => (i % 2 ? 3 : 7)),
    );
  });

  it('builds rows as plain objects, and follows a schema change made by another connection', async () => {
    const other = new SQLite(file);
    try {
      other.exec(`create table t (a integer); insert into t values (1)`);
      const rows = await readerThread()!.query('select * from t', []);
      assert.deepEqual(rows, [{ a: 1 }]);
      assert.equal(Object.getPrototypeOf(rows[0]), Object.prototype);
      other.exec(`alter table t add column b text default 'x'`);
      assert.deepEqual(await readerThread()!.query('select * from t', []), [{ a: 1, b: 'x' }]);
      assert.deepEqual(await readerThread()!.query('select * from t where a = ?', [2]), []);
      // Values JSON cannot carry (they go by structured clone) come back as they are.
      const [odd] = (await readerThread()!.query(`select x'0102' as b, 9e999 as inf`, [])) as {
        b: Uint8Array;
        inf: number;
      }[];
      assert.deepEqual([...odd!.b], [1, 2]);
      assert.equal(odd!.inf, Infinity);
      // ...and strings that JSON must escape survive the JSON path unchanged.
      const tricky = `select 'é"\\' || char(0) || char(10) || char(55357) as s, 2.5 as r, -1 as i`;
      assert.deepEqual(await readerThread()!.query(tricky, []), (await sql.raw(tricky).execute(db)).rows);
    } finally {
      other.close();
    }
  });

  it('shows committed rows only, without waiting, while a transaction is open on the main connection', async () => {
    const { tx, release } = await openBump(db, 'prj_t', 100);
    assert.equal(await readCounter(database, 'prj_t', 'files'), 3, 'the uncommitted +100 is not visible');
    release();
    await assert.rejects(tx, /roll back/);
    assert.equal(await readCounter(database, 'prj_t', 'files'), 3);
  });

  it('reports a failed query without failing the thread, and can never write', async () => {
    const reader = readerThread()!;
    await assert.rejects(
      reader.query('select * from no_such_table', []),
      (err: Error & { code?: string }) => /no such table/.test(err.message) && err.code === 'SQLITE_ERROR',
    );
    await assert.rejects(reader.query('delete from counters', []), /read-only/);
    await assert.rejects(
      reader.query("insert into counters (project_id, resource, count) values ('p', 'files', 1) returning count", []),
      /read-only/,
    );
    assert.ok(reader.usable);
    assert.equal(await readCounter(database, 'prj_t', 'files'), 3);
  });

  it('renders rows as JSON on the thread, with a renderer of the closed table', async () => {
    const url = 'https://media.example';
    const rows = [
      fileRow('prj_r', 'file_a', '2026-01-01T00:00:00.000Z'),
      fileRow('prj_r', 'file_b', '2026-01-02T00:00:00.000Z'),
    ];
    await db.insertInto('files').values(rows).execute();
    const expected = (rs: typeof rows) => JSON.parse(JSON.stringify(rs.map((r) => toFileObject(url, r)))) as unknown;
    assert.deepEqual(
      JSON.parse(await readFilesPageJson(database, url, 'prj_r', 20, 0)),
      expected([rows[1]!, rows[0]!]),
    );
    assert.deepEqual(JSON.parse(await readFilesPageJson(database, url, 'prj_none', 20, 0)), []);
    // A commit is seen by the next rendered read, as by any other.
    const third = fileRow('prj_r', 'file_c', '2026-01-03T00:00:00.000Z');
    await db.insertInto('files').values(third).execute();
    assert.deepEqual(JSON.parse(await readFilesPageJson(database, url, 'prj_r', 2, 0)), expected([third, rows[1]!]));
    assert.deepEqual(JSON.parse(await readFilesPageJson(database, url, 'prj_r', 2, 2)), expected([rows[0]!]));
    assert.ok(readerThread()!.usable);
  });

  it('falls back to the main connection once the thread is gone', async () => {
    const reader = readerThread()!;
    await reader.close();
    assert.equal(reader.usable, false);
    await assert.rejects(reader.query('select 1', []), /closed/);
    assert.equal(await readCounter(database, 'prj_t', 'files'), 3);
    await db.transaction().execute((trx) => bumpCounter(trx, 'prj_t', 'files', 1));
    assert.equal(await readCounter(database, 'prj_t', 'files'), 4);
    // Rendered reads give the same text, rendered here.
    const url = 'https://media.example';
    assert.deepEqual(
      (JSON.parse(await readFilesPageJson(database, url, 'prj_r', 20, 0)) as { id: string }[]).map((f) => f.id),
      ['file_c', 'file_b', 'file_a'],
    );
  });
});
