// A bound value compared with a column that a partial index's predicate compares with a literal
// (tasks_claim's `status = 'pending'`, events_undispatched's `dispatched = 0`) makes SQLite mark the
// statement's plan as depending on that value, and re-prepare the statement at every run with a new
// binding (measured on a migrated database: a count with `status = ?` 12–16 µs a run against 5–6 µs
// with the literal). A bound LIMIT does the same (db/sqlite-compiler.ts). The statements that filter
// on such a column say the value as a literal; this test holds them to it, reading the predicates
// from the migrated schema.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { migrate } from '../../src/db/connect.js';
import type { Database, TaskStatus } from '../../src/db/schema.js';
import { pendingTasks } from '../../src/queue/task-state.js';
import { registerWorker } from '../../src/queue/worker-registry.js';
import { listWorkers, queueTotals } from '../../src/services/operations/queue.js';
import { filterTasks } from '../../src/services/media/tasks.js';
import { markProjectDeleted } from '../../src/services/people/project-deletion.js';
import { depsWith } from '../helpers/memory-deps.js';

const STATUSES: TaskStatus[] = ['pending', 'processing', 'waiting', 'completed', 'failed', 'cancelled'];

test('statements on a partially indexed column compare it with literals, not bound values', async () => {
  const statements: string[] = [];
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: new SQLite(':memory:') }),
    log: (event) => void statements.push(event.query.sql),
  });
  try {
    await migrate(db);
    // Each partial index whose predicate compares a column with a literal: table → columns.
    const indexed = new Map<string, Set<string>>();
    const { rows } = await sql<{
      table: string;
      definition: string | null;
    }>`select tbl_name as "table", sql as definition from sqlite_master where type = 'index'`.execute(db);
    for (const { table, definition } of rows) {
      const predicate = /\swhere\s+"?(\w+)"?\s*=\s*(?:'[^']*'|\d+)\s*$/i.exec(definition ?? '');
      if (predicate) indexed.set(table, (indexed.get(table) ?? new Set()).add(predicate[1]!));
    }
    assert.deepEqual([...(indexed.get('tasks') ?? [])].sort(), ['status']);
    assert.deepEqual([...(indexed.get('events') ?? [])], ['dispatched']);

    statements.length = 0;
    for (const status of STATUSES) await filterTasks(db, 'prj_x', { status }).selectAll().execute();
    await pendingTasks(db, 'prj_x', 10);
    await markProjectDeleted(db, 'prj_x', new Date().toISOString());
    const deps = depsWith(db, { workers: { leaseMs: 30_000 } });
    await queueTotals(deps);
    const now = new Date().toISOString();
    await registerWorker(db, { id: 'w', host: 'h', pid: 1, concurrency: 1, started: now, heartbeat: now });
    await listWorkers(deps, { orgId: 'org_x' });

    let checked = 0;
    for (const statement of statements) {
      for (const [table, columns] of indexed) {
        if (!new RegExp(`\\b(from|update) "${table}"`).test(statement)) continue;
        checked++;
        // The conditions only: an update's SET may bind the column.
        const conditions = statement.slice(Math.max(0, statement.indexOf(' where ')));
        for (const column of columns)
          assert.doesNotMatch(
            conditions,
            new RegExp(`"${column}" = \\?`),
            `a bound ${table}.${column} in: ${statement}`,
          );
      }
    }
    // The filter's six statuses, the pending count, the deletion's statements on tasks and events,
    // the queue's counts and the workers' running tasks.
    assert.ok(checked >= STATUSES.length + 5, `${checked} statements checked`);
    for (const status of STATUSES)
      assert.ok(
        statements.some((s) => s.includes(`"status" = '${status}'`)),
        `the list filtered on ${status} says it as a literal`,
      );
  } finally {
    await db.destroy();
  }
});
