import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { migrate, openDatabase } from '../../src/db/connect.js';
import { storedRequests } from '../helpers/request-log.js';
import { testDatabase } from '../helpers/server.js';

// Migration 011 turns the request log's table of a row per request (008) into segments, on SQLite
// and (npm run test:pg) on PostgreSQL: every request and every column carried over, in the order
// written, 512 to a segment, with each segment's counts; on PostgreSQL ids compare by code unit.

it('migration 011 carries the rows of the old table over into segments, every column', async () => {
  const pg = await testDatabase();
  const opened = openDatabase(pg ?? { dialect: 'sqlite', file: ':memory:' });
  try {
    const old = opened.db as unknown as Kysely<any>; // the schema of migration 008's day
    await migrate(opened.db, '010-operations');
    const rows = Array.from({ length: 1030 }, (_, i) => ({
      id: `req_${String(i).padStart(20, '0')}`,
      project_id: i % 2 ? 'prj_a' : 'prj_b',
      created: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      method: i % 5 ? 'GET' : 'POST',
      route: i % 7 ? '/files/:id' : null,
      // A tab, a newline and a backslash (escaped by the migration as by the codec).
      path: i === 3 ? '/odd\tpath\n?x=\\' : `/files/${i}`,
      status: i % 4 ? 200 : 404,
      duration_ms: i / 8,
      key_id: i % 3 ? `key_${i}` : null,
      user_id: i % 3 ? null : `usr_${i}`,
      actor: i % 3 ? 'key' : 'session',
    }));
    await old.insertInto('request_log').values(rows).execute();
    await migrate(opened.db);
    for (const projectId of ['prj_a', 'prj_b'])
      assert.deepEqual(
        await storedRequests(opened.db, projectId),
        rows.filter((r) => r.project_id === projectId).map(({ project_id: _, ...r }) => r),
      );
    const segments = await opened.db.selectFrom('request_log_segments').selectAll().orderBy('seq').execute();
    assert.deepEqual(
      segments.map((s) => [s.project_id, s.rows, s.n2xx, s.n4xx, s.first_id, s.last_id]),
      [
        ['prj_b', 512, 256, 256, rows[0]!.id, rows[1022]!.id],
        ['prj_a', 512, 512, 0, rows[1]!.id, rows[1023]!.id],
        ['prj_b', 3, 1, 2, rows[1024]!.id, rows[1028]!.id],
        ['prj_a', 3, 3, 0, rows[1025]!.id, rows[1029]!.id],
      ],
    );
    if (pg) {
      // Ids compare by code unit, as the codec compares them, whatever the database's collation.
      const { rows: columns } = await sql<{ column_name: string; collation_name: string }>`
        select column_name, collation_name from information_schema.columns
        where table_name = 'request_log_segments' and column_name in ('first_id', 'last_id')`.execute(opened.db);
      assert.deepEqual(
        columns.map((c) => c.collation_name),
        ['C', 'C'],
      );
    }
  } finally {
    await opened.close();
    await pg?.drop();
  }
});
