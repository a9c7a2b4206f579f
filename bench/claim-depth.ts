// How a task's claim scales with the depth of the queue: the product's own claim() against
// 100, 10,000 and 100,000 pending tasks over three projects, on SQLite and (when reachable) on
// PostgreSQL. A claim picks the fair project first; the figure to watch is the ratio of a deep
// queue's claim to a shallow one's (1.0 = the depth costs nothing). Then the same 10,000 tasks
// with 20,000 more projects in 500 other organisations, with nothing paused and with one kind
// paused for one of them: the number of projects should cost nothing either.
// Run: npm run bench:claim   (BENCH_PG_URL: an admin URL, default postgres://postgres@127.0.0.1:5432/postgres)
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import type { Config } from '../src/config.js';
import { migrate, openDatabase } from '../src/db/connect.js';
import type { Database } from '../src/db/schema.js';
import { claim } from '../src/queue/task-state.js';
import { ADMIN_PG, fmt, freshPg, median, table, writeResults } from './lib.js';

const DEPTHS = [100, 10_000, 100_000];
const CLAIMS = 50;
const MORE_PROJECTS = 20_000;
const ORGS = 500;

/** `depth` pending tasks of three projects, due, oldest first, in one statement. */
async function fill(db: Kysely<Database>, depth: number): Promise<void> {
  await sql`delete from tasks`.execute(db);
  await sql`with recursive n(g) as (select 0 union all select g + 1 from n where g + 1 < ${depth})
    insert into tasks (id, project_id, kind, status, options, target, max_attempts, run_after, created, updated)
    select 'task_' || g, 'prj_' || (1 + g % 3), 'image', 'pending', '{}', '{}', 3, '2026-11-30T00:00:00.000Z',
      '2026-11-30T00:00:00.000Z', '2026-11-30T00:00:00.000Z' from n`.execute(db);
  await sql`analyze`.execute(db);
}

async function measure(database: Config['database']) {
  const { db } = openDatabase(database);
  try {
    await migrate(db);
    await sql`insert into orgs (id, name, created) values ('org_a', 'a', '2026-01-01')`.execute(db);
    for (const n of [1, 2, 3])
      await sql`insert into projects (id, org_id, name, signing_secret, webhook_secret, created)
        values (${`prj_${n}`}, 'org_a', ${`p${n}`}, 's', 'w', '2026-01-01')`.execute(db);
    const rows: { depth: number; projects: string; medianMs: number; maxMs: number }[] = [];
    const run = async (depth: number, projects: string) => {
      await fill(db, depth);
      const now = new Date(Date.UTC(2026, 11, 1));
      const times: number[] = [];
      for (let i = 0; i < CLAIMS; i++) {
        const started = performance.now();
        if (!(await claim(db, 'bench', 30_000, now))) throw new Error('nothing was claimed');
        times.push(performance.now() - started);
      }
      rows.push({ depth, projects, medianMs: median(times), maxMs: Math.max(...times) });
    };
    for (const depth of DEPTHS) await run(depth, '3');
    await sql`with recursive n(g) as (select 0 union all select g + 1 from n where g + 1 < ${ORGS})
      insert into orgs (id, name, created) select 'org_x' || g, 'x' || g, '2026-01-01' from n`.execute(db);
    await sql`with recursive n(g) as (select 0 union all select g + 1 from n where g + 1 < ${MORE_PROJECTS})
      insert into projects (id, org_id, name, signing_secret, webhook_secret, created)
      select 'prj_x' || g, 'org_x' || (g % ${sql.lit(ORGS)}), 'x' || g, 's', 'w', '2026-01-01' from n`.execute(db);
    await run(10_000, `3 + ${MORE_PROJECTS}`);
    await sql`insert into queue_pauses (org_id, kind, paused) values ('org_x0', 'video', '2026-01-01')`.execute(db);
    await run(10_000, `3 + ${MORE_PROJECTS}, a kind paused`);
    return rows;
  } finally {
    await db.destroy();
  }
}

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-bench-claim-'));
const results: Record<string, Awaited<ReturnType<typeof measure>>> = {};
try {
  results.sqlite = await measure({ dialect: 'sqlite', file: path.join(dir, 'mediad.db') });
  const pgUrl = await freshPg('mediad_bench_claim').catch(() => null);
  if (pgUrl) results.postgres = await measure({ dialect: 'postgres', url: pgUrl, poolSize: 2 });
  else console.log(`PostgreSQL not reachable at ${ADMIN_PG}: SQLite only`);
} finally {
  await fs.rm(dir, { recursive: true, force: true });
}

console.log(`\nclaim() against a queue of N pending tasks (${CLAIMS} claims each; ms)\n`);
const rows = Object.entries(results).flatMap(([dialect, byDepth]) =>
  byDepth.map((r) => [
    dialect,
    r.depth,
    r.projects,
    fmt(r.medianMs, 2),
    fmt(r.maxMs, 2),
    `${fmt(r.medianMs / byDepth[0]!.medianMs, 2)}x`,
  ]),
);
console.log(
  table(['database', 'pending tasks', 'projects', 'median ms', 'max ms', `÷ ${DEPTHS[0]} pending, 3 projects`], rows),
);
console.log(
  `\nJSON summary: ${await writeResults('claim-depth', { date: new Date().toISOString(), cpus: os.availableParallelism(), claims: CLAIMS, results })}`,
);
