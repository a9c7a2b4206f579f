// Diagnostic for issue 26's small tasks on PostgreSQL: batches of N small image tasks with two
// `mediad worker` processes, and per task the CPU of the server, each worker and the database's
// backends (/proc), pg_stat_database's transactions and tuples, and the WAL written per task. TRACE=1 also logs every
// statement's duration (log_min_duration_statement=0 on the scratch database) and prints the log's
// byte range of each batch in BENCH_PG_LOG (the server's log file), for a breakdown per statement.
// WORKER_FLAGS: node flags for the workers (--cpu-prof --cpu-prof-dir=...). PGSS=K prints the K
// statements that took the database longest in each batch (needs pg_stat_statements).
// Run: N=200 ROUNDS=2 node --import tsx bench/pg-trace.ts
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import pg from 'pg';
import { api, processCpuMs, startMediad, upload } from './child.js';
import { mediadInvocation } from './lib.js';
import { fixture } from '../test/helpers/fixtures.js';
import { queueSmallBatch } from './small-tasks.js';

const N = Number(process.env.N ?? 200);
const ADMIN = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const db = 'mediad_pgtrace';
const admin = new pg.Client({ connectionString: ADMIN });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
await admin.query(`CREATE DATABASE ${db}`);
if (process.env.TRACE) await admin.query(`ALTER DATABASE ${db} SET log_min_duration_statement = 0`);
const LOG = process.env.BENCH_PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log';
const logSize = async () => (await fs.stat(LOG).catch(() => ({ size: 0 }))).size;
const url = `postgres://postgres@127.0.0.1:5432/${db}`;
const m = await startMediad({ MEDIAD_DATABASE_URL: url, MEDIAD_SERVE_WORKERS: 'false' });
// The workers as users start them: the built command (and WORKER_FLAGS, node flags, beside its #! line's).
const worker = await mediadInvocation('worker', (process.env.WORKER_FLAGS ?? '').split(' ').filter(Boolean));
const workers: ChildProcess[] = Array.from({ length: 2 }, () =>
  spawn(worker.command, worker.args, {
    env: {
      ...process.env,
      ...worker.env,
      MEDIAD_DATA_DIR: m.dataDir,
      MEDIAD_DATABASE_URL: url,
      MEDIAD_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  }),
);
const backends = async () =>
  (await admin.query(`select pid, application_name, client_port from pg_stat_activity where datname = $1`, [db])).rows;
const pgCpu = async () => {
  let s = 0;
  for (const b of await backends()) s += await processCpuMs(b.pid).catch(() => 0);
  return s;
};
try {
  while ((await api(m, 'GET', '/workers')).length < 2) await new Promise((r) => setTimeout(r, 100));
  const file = await upload(m, await fixture('image-png'), 'small.png');
  const batch = async () => {
    const small = await queueSmallBatch(m, file.id, N);
    await new Promise((r) => setTimeout(r, 1500)); // let the task.created events dispatch
    const stat0 = (
      await admin.query(
        `select xact_commit, tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted from pg_stat_database where datname=$1`,
        [db],
      )
    ).rows[0];
    const cpu0 = await Promise.all([m.child, ...workers].map((c) => processCpuMs(c.pid!)));
    const pg0 = await pgCpu();
    // The cluster's WAL position: what the batch wrote to PostgreSQL's WAL (the bench's polls included).
    const lsn = async () =>
      (await admin.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn;
    const wal0 = await lsn();
    const log0 = await logSize();
    if (process.env.PGSS) await admin.query('select pg_stat_statements_reset()');
    const t0 = Date.now();
    await small.run();
    const wall = Date.now() - t0;
    if (process.env.PGSS) {
      // pg_stat_statements (shared_preload_libraries, the extension in the admin database): the
      // statements of the batch by time, calls and rows per task.
      const top = await admin.query(
        `select calls, total_exec_time, rows, shared_blks_hit, query from pg_stat_statements s join pg_database d on d.oid = s.dbid where d.datname = $1 order by total_exec_time desc limit ${Number(process.env.PGSS)}`,
        [db],
      );
      for (const r of top.rows)
        console.log(
          `${(r.total_exec_time / N).toFixed(3)} ms/task ${(r.calls / N).toFixed(2)} calls/task ${(r.rows / N).toFixed(1)} rows/task ${(r.shared_blks_hit / N).toFixed(0)} blks/task | ${String(r.query).replace(/\s+/g, ' ').slice(0, 220)}`,
        );
    }
    console.log(`log bytes ${log0}-${await logSize()}`);
    const cpu1 = await Promise.all([m.child, ...workers].map((c) => processCpuMs(c.pid!)));
    const pg1 = await pgCpu();
    const walBytes = Number(
      (await admin.query<{ d: string }>('select pg_wal_lsn_diff($1, $2)::text as d', [await lsn(), wal0])).rows[0]!.d,
    );
    const stat1 = (
      await admin.query(
        `select xact_commit, tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted from pg_stat_database where datname=$1`,
        [db],
      )
    ).rows[0];
    const per = (a: number, b: number) => ((b - a) / N).toFixed(2);
    console.log(
      `tasks/s ${(await small.perSecond()).toFixed(1)} (wall ${wall} ms) | CPU ms/task server ${per(cpu0[0]!, cpu1[0]!)} workers ${per(cpu0[1]!, cpu1[1]!)} + ${per(cpu0[2]!, cpu1[2]!)} postgres backends ${per(pg0, pg1)} | WAL ${(walBytes / N / 1024).toFixed(1)} KiB/task`,
    );
    const d: Record<string, string> = {};
    for (const k of Object.keys(stat1)) d[k] = per(Number(stat0[k]), Number(stat1[k]));
    console.log('per task (pg_stat_database):', JSON.stringify(d));
  };
  for (let r = 0; r < Number(process.env.ROUNDS ?? 2); r++) await batch();
  console.log(
    'worker pids',
    workers.map((w) => w.pid),
    'server',
    m.child.pid,
    'backends',
    JSON.stringify(await backends()),
  );
} finally {
  await Promise.all(
    workers.map(
      (w) =>
        new Promise((r) => {
          w.once('exit', r);
          w.kill('SIGTERM');
        }),
    ),
  );
  m.child.kill('SIGTERM');
  await admin.end();
  await fs.rm(m.dataDir, { recursive: true, force: true }).catch(() => undefined);
}
