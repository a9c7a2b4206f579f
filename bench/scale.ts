// Scale-out benchmarks (issue: PostgreSQL, S3, many processes):
//   queue   on PostgreSQL with 1, 2 and 4 `mediad worker` processes: pickup latency (created -> started,
//           one task at a time) and claim throughput (500 cheap `conditions` tasks at once)
//   lists   GET /files/{id} and GET /files?limit=20 latency with 1,000,000 files in a project,
//           on PostgreSQL and on SQLite (wrk -c4, so latency is not queueing)
// Run: npm run bench:scale (needs PostgreSQL on 127.0.0.1:5432; results in bench/results/scale.json)
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Agent } from 'undici';
import SQLite from 'better-sqlite3';
import { fixture } from '../test/helpers/fixtures.js';
import { api, listMeta, pct, startMediad, upload, type Mediad } from './child.js';
import { freshPg, mediadCommand } from './lib.js';

const FILES = Number(process.env.BENCH_FILES ?? 1_000_000);

async function startWorkers(m: Mediad, dbUrl: string, n: number): Promise<ChildProcess[]> {
  const cli = await mediadCommand();
  return Array.from({ length: n }, () =>
    spawn(cli, ['worker'], {
      env: {
        ...process.env,
        MEDIAD_DATA_DIR: m.dataDir,
        MEDIAD_DATABASE_URL: dbUrl,
        MEDIAD_LOG_LEVEL: 'warn',
        MEDIAD_WORKER_CONCURRENCY: '2',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    }),
  );
}

const pause = async <T>(fn: () => Promise<T>) => {
  await new Promise((r) => setTimeout(r, 2));
  return fn();
};

async function queueRound(workers: number) {
  const dbUrl = await freshPg(`mediad_bench_q${workers}`);
  const m = await startMediad({
    MEDIAD_DATABASE_URL: dbUrl,
    MEDIAD_SERVE_WORKERS: 'false',
    MEDIAD_RATE_LIMIT_PER_MINUTE: '0',
  });
  const procs = await startWorkers(m, dbUrl, workers);
  try {
    const file = await upload(m, await fixture('image-png'), 'q.png');
    const body = { kind: 'conditions', file_id: file.id, conditions: [{ prop: 'kind', value: 'image' }] };
    // Wait until every worker process is up: a warm-up task per worker completes.
    const warm = await Promise.all(procs.map(() => api(m, 'POST', '/tasks', body)));
    for (const w of warm)
      while ((await api(m, 'GET', `/tasks/${w.id}`)).status !== 'completed')
        await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 1000));
    const pickup: number[] = [];
    for (let i = 0; i < 100; i++) {
      const t = await api(m, 'POST', '/tasks', body);
      let cur = t;
      while (!cur.started) cur = await pause(() => api(m, 'GET', `/tasks/${t.id}`));
      pickup.push(Date.parse(cur.started) - Date.parse(cur.created));
      while (cur.status !== 'completed') cur = await pause(() => api(m, 'GET', `/tasks/${t.id}`));
    }
    const before = (await listMeta(m, '/tasks?status=completed&limit=1')).total as number;
    const start = performance.now();
    await Promise.all(Array.from({ length: 500 }, () => api(m, 'POST', '/tasks', body)));
    while ((await listMeta(m, '/tasks?status=completed&limit=1')).total < before + 500)
      await new Promise((r) => setTimeout(r, 20));
    const seconds = (performance.now() - start) / 1000;
    return {
      workers,
      pickupP50Ms: pct(pickup, 50),
      pickupP99Ms: pct(pickup, 99),
      tasksPerSecond: Math.round(500 / seconds),
    };
  } finally {
    for (const p of procs) p.kill('SIGTERM');
    m.child.kill('SIGTERM');
  }
}

/** Seeds FILES rows and the exact counter straight into the database (the API is not what is measured here). */
async function seed(m: Mediad, db: 'sqlite' | 'postgres', dbUrl?: string): Promise<string> {
  const project = (await api(m, 'GET', '/project')).id as string;
  const media = (await api(m, 'POST', '/media', {})).id as string;
  const now = new Date().toISOString();
  if (db === 'postgres') {
    const c = new pg.Client({ connectionString: dbUrl });
    await c.connect();
    await c.query(
      `insert into files (id, project_id, media_id, kind, format, type, width, height, filesize, folder, filename, metadata, status, blob_key, created, updated)
      select 'file_seed' || lpad(g::text, 10, '0'), $1, $2, 'image', 'png', 'image/png', 64, 48, 1000, 'seed', 'f' || g || '.png', '{}', 'ready', 'none',
             to_char(timestamp '2026-01-01' + g * interval '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), $3
      from generate_series(1, $4::int) g`,
      [project, media, now, FILES],
    );
    await c.query(
      `insert into counters (project_id, resource, count) values ($1, 'files', $2) on conflict (project_id, resource) do update set count = excluded.count`,
      [project, FILES],
    );
    await c.query('analyze files');
    await c.end();
  } else {
    const s = new SQLite(path.join(m.dataDir, 'mediad.db'));
    s.pragma('busy_timeout = 10000');
    const ins =
      s.prepare(`insert into files (id, project_id, media_id, kind, format, type, width, height, filesize, folder, filename, metadata, status, blob_key, created, updated)
      values (?, ?, ?, 'image', 'png', 'image/png', 64, 48, 1000, 'seed', ?, '{}', 'ready', 'none', ?, ?)`);
    const base = Date.parse('2026-01-01T00:00:00Z');
    s.transaction(() => {
      for (let g = 1; g <= FILES; g++)
        ins.run(
          `file_seed${String(g).padStart(10, '0')}`,
          project,
          media,
          `f${g}.png`,
          new Date(base + g).toISOString(),
          now,
        );
    })();
    s.prepare(
      `insert into counters (project_id, resource, count) values (?, 'files', ?) on conflict (project_id, resource) do update set count = excluded.count`,
    ).run(project, FILES);
    s.pragma('wal_checkpoint(TRUNCATE)');
    s.close();
  }
  return `file_seed${String(Math.floor(FILES / 2)).padStart(10, '0')}`;
}

function wrk(m: Mediad, url: string): { rps: number; p50Ms: number; p99Ms: number } {
  const ca = path.join(m.dataDir, 'tls', 'ca.crt');
  void ca; // wrk does not verify certificates; the address is loopback.
  const out = execFileSync('wrk', ['-t1', '-c4', '-d8s', '--latency', '-H', `Authorization: Bearer ${m.key}`, url], {
    encoding: 'utf8',
  });
  const unit = (v: string, u: string) => Number(v) * (u === 's' ? 1000 : u === 'us' ? 0.001 : 1);
  const lat = (p: string) => {
    const r = new RegExp(`${p}%\\s+([\\d.]+)(us|ms|s)`).exec(out)!;
    return unit(r[1]!, r[2]!);
  };
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]), p50Ms: lat('50'), p99Ms: lat('99') };
}

async function listRound(db: 'sqlite' | 'postgres') {
  const dbUrl = db === 'postgres' ? await freshPg('mediad_bench_lists') : undefined;
  const m = await startMediad({
    ...(dbUrl ? { MEDIAD_DATABASE_URL: dbUrl } : {}),
    MEDIAD_SERVE_WORKERS: 'false',
    MEDIAD_RATE_LIMIT_PER_MINUTE: '0',
  });
  try {
    const id = await seed(m, db, dbUrl);
    // Seeding took longer than the server keeps idle connections: start with fresh ones.
    await m.agent.close();
    m.agent = new Agent({
      connect: { ca: await fs.readFile(path.join(m.dataDir, 'tls', 'ca.crt'), 'utf8'), servername: 'localhost' },
    });
    const total = (await listMeta(m, '/files?limit=20')).total;
    if (total !== FILES + 0) throw new Error(`total ${total} is not exact`);
    return {
      db,
      files: FILES,
      totalExact: true,
      get: wrk(m, `${m.base.replace('localhost', '127.0.0.1')}/files/${id}`),
      list: wrk(m, `${m.base.replace('localhost', '127.0.0.1')}/files?limit=20`),
    };
  } finally {
    m.child.kill('SIGTERM');
    await fs.rm(m.dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

const queue = [];
for (const n of [1, 2, 4]) {
  queue.push(await queueRound(n));
  console.log(JSON.stringify(queue.at(-1)));
}
const lists = [];
for (const db of ['postgres', 'sqlite'] as const) {
  lists.push(await listRound(db));
  console.log(JSON.stringify(lists.at(-1)));
}
const results = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.availableParallelism(),
  queue,
  lists,
};
await fs.mkdir('bench/results', { recursive: true });
await fs.writeFile('bench/results/scale.json', `${JSON.stringify(results, null, 2)}\n`);
console.log('\nqueue on PostgreSQL (conditions tasks; worker processes of concurrency 2)');
for (const q of queue)
  console.log(
    `  ${q.workers} worker(s): pickup p50 ${q.pickupP50Ms} ms, p99 ${q.pickupP99Ms} ms (target p50 < 25 ms) ${q.pickupP50Ms < 25 ? 'PASS' : 'FAIL'} | ${q.tasksPerSecond} tasks/s`,
  );
console.log(`lists with ${FILES.toLocaleString('en')} files (wrk -c4; totals exact)`);
for (const l of lists) {
  console.log(
    `  ${l.db}: GET /files/{id} p50 ${l.get.p50Ms} ms p99 ${l.get.p99Ms} ms | GET /files?limit=20 p50 ${l.list.p50Ms} ms p99 ${l.list.p99Ms} ms (target p99 < 20 ms) ${l.list.p99Ms < 20 ? 'PASS' : 'FAIL'}`,
  );
}
