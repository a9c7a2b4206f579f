// Cold start and memory of `mediad serve` (issue 26) beside the floor: a bare Fastify HTTPS server
// started with `node -e` (one /health route, the same certificate). Interleaved rounds, each
// starting every case once: mediad on an existing data directory (100,000 files), mediad on a new
// one (the CA, the certificate and the migrations made at start), the bare server, and
// `mediad --help` (the command's modules imported, nothing started). Per start: spawn → first
// /health 200 (wall and the child's CPU of all threads), then RSS and threads 3 s later (idle).
// Last, RSS under API load (wrk -c64 on GET /files/{id} and GET /files?limit=20).
// Run: npm run bench:startup   (BENCH_ROUNDS=3; BENCH_BASELINE_ROOT=<other built checkout> adds
// its mediad as case (a0) in the same rounds, for a before/after in one run; BENCH_SKIP_BUILD=1).
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import https from 'node:https';
import { loadavg } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { FILES, seedFiles } from './seed-files.js';
import {
  REPO,
  cpuMs,
  fmt,
  freePort,
  median,
  mediadEnv,
  removeDir,
  request,
  rssBytes,
  sleep,
  table,
  tempDataDir,
  verdict,
  wrk,
  writeResults,
} from './lib.js';

const run = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const IDLE_MS = 3000;
const LOAD_SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 5);
const ROOT = path.resolve(process.env.BENCH_MEDIAD_ROOT ?? REPO);
const BASELINE = process.env.BENCH_BASELINE_ROOT ? path.resolve(process.env.BENCH_BASELINE_ROOT) : null;
const TARGET_START_MS = 1500;
const TARGET_IDLE_MB = 150;

/** The floor: Fastify over HTTPS with one route, as small a server as the same stack allows. */
const BARE = `
const fs = require('node:fs');
const Fastify = require('fastify');
const dir = process.env.BARE_TLS_DIR;
const app = Fastify({ https: { cert: fs.readFileSync(dir + '/server.crt'), key: fs.readFileSync(dir + '/server.key') } });
app.get('/health', async () => ({ meta: { type: 'object' }, data: { status: 'ok' }, links: {} }));
app.get('/files', async () => ({ meta: { type: 'list' }, data: [], links: {} }));
app.listen({ host: '127.0.0.1', port: Number(process.env.BARE_PORT) });
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
`;

interface Start {
  ms: number;
  cpuMs: number;
  idleMb: number;
  threads: number;
}

/** One GET /health over a fresh TLS connection; a new data dir's CA does not exist before the server makes it. */
function healthy(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.get(`${url}/health`, { rejectUnauthorized: false, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
    });
    req.on('error', () => resolve(false));
  });
}

async function threadsOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^Threads:\s+(\d+)$/m.exec(status)?.[1] ?? 0);
}

/** Spawns `command`, polls /health until 200, measures; the child is left running for `then`. */
async function measureStart<T>(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  url: string,
  then?: (pid: number) => Promise<T>,
): Promise<Start & { extra?: T }> {
  const started = performance.now();
  const proc = spawn(command, args, { env, cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`${command} exited with ${proc.exitCode}: ${stderr}`);
      // Until it listens, a poll is a refused connect: cheap for the child.
      const ok = await healthy(url);
      if (ok) break;
      if (performance.now() - started > 60_000) throw new Error(`${command} not healthy in 60 s: ${stderr}`);
      await sleep(5);
    }
    const ms = performance.now() - started;
    const cpu = await cpuMs(proc.pid!);
    await sleep(IDLE_MS);
    const idleMb = ((await rssBytes(proc.pid!)) ?? 0) / 1e6;
    const threads = await threadsOf(proc.pid!);
    const extra = then ? await then(proc.pid!) : undefined;
    return { ms, cpuMs: cpu, idleMb, threads, ...(extra === undefined ? {} : { extra }) };
  } finally {
    const exited = once(proc, 'exit');
    proc.kill('SIGTERM');
    await Promise.race([exited, sleep(15_000).then(() => proc.kill('SIGKILL'))]);
  }
}

/** `mediad --help`: the command's modules imported and nothing started. */
async function importOnly(root: string): Promise<{ ms: number }> {
  const started = performance.now();
  await run(path.join(root, 'dist', 'src', 'cli.js'), ['--help'], { cwd: root });
  return { ms: performance.now() - started };
}

/** Peak and settled RSS of a server while wrk loads `urls` one after the other. */
async function underLoad(pid: number, urls: string[], headers: Record<string, string>) {
  let peak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, (await rssBytes(pid)) ?? 0);
      await sleep(100);
    }
  })();
  const rps: number[] = [];
  const errors: string[] = [];
  for (const url of urls) {
    const r = await wrk(url, headers, LOAD_SECONDS, 1);
    rps.push(r.rps);
    if (r.errors) errors.push(`${url}: ${r.errors}`);
  }
  sampling = false;
  await sampler;
  await sleep(IDLE_MS);
  return {
    peakMb: peak / 1e6,
    afterMb: ((await rssBytes(pid)) ?? 0) / 1e6,
    threads: await threadsOf(pid),
    rps,
    errors,
  };
}

async function main(): Promise<void> {
  if (!process.env.BENCH_SKIP_BUILD) await run('npm', ['run', '--silent', 'build:ts'], { cwd: ROOT });
  const cli = (root: string) => path.join(root, 'dist', 'src', 'cli.js');
  const existing = await tempDataDir('startup');
  const port = await freePort();
  const env = mediadEnv(existing, port);
  const url = `https://127.0.0.1:${port}`;
  const dirs = [existing];
  try {
    // The existing data directory: made by a first start, then 100,000 files as in bench:api.
    const { stdout } = await run(cli(ROOT), ['keys', 'create', '--org', 'bench', '--project', 'bench', '--json'], {
      env,
      cwd: ROOT,
    });
    const key = JSON.parse(stdout.trim().split('\n').at(-1)!) as { key: string; project_id: string };
    const seeded = seedFiles(path.join(existing, 'mediad.db'), key.project_id);
    await measureStart(cli(ROOT), ['serve'], env, url); // makes the CA and certificate, warms the page cache
    const bareEnv = { ...process.env, BARE_TLS_DIR: path.join(existing, 'tls'), BARE_PORT: String(port) };

    type Case = { name: string; start: () => Promise<Start> };
    const cases: Case[] = [
      ...(BASELINE
        ? [
            {
              name: `(a0) baseline ${BASELINE}, existing data dir`,
              start: () => measureStart(cli(BASELINE), ['serve'], env, url),
            },
          ]
        : []),
      { name: '(a) mediad serve, existing data dir', start: () => measureStart(cli(ROOT), ['serve'], env, url) },
      {
        name: '(b) mediad serve, new data dir',
        start: async () => {
          const fresh = await tempDataDir('startup-new');
          dirs.push(fresh);
          return measureStart(cli(ROOT), ['serve'], mediadEnv(fresh, port), url);
        },
      },
      {
        name: '(c) bare Fastify HTTPS (node -e)',
        start: () => measureStart(process.execPath, ['-e', BARE], bareEnv, url),
      },
      {
        name: '(d) mediad --help (imports only)',
        start: async () => ({ ...(await importOnly(ROOT)), cpuMs: 0, idleMb: 0, threads: 0 }),
      },
    ];
    const measured = cases.map(() => [] as Start[]);
    const loads: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      loads.push(loadavg()[0]!);
      for (const [i, c] of cases.entries()) {
        const s = await c.start();
        console.log(
          `round ${round}/${ROUNDS} ${c.name}: ${fmt(s.ms, 0)} ms, CPU ${s.cpuMs} ms, idle ${fmt(s.idleMb)} MB, ${s.threads} threads`,
        );
        measured[i]!.push(s);
      }
    }
    const mid = (i: number, f: (s: Start) => number) => median(measured[i]!.map(f));
    const at = (prefix: string) => cases.findIndex((c) => c.name.startsWith(prefix));
    const [a, b, c, d] = ['(a)', '(b)', '(c)', '(d)'].map(at) as [number, number, number, number];

    // RSS under API load: one more start of (a), and of the bare server for the floor.
    const auth = { Authorization: `Bearer ${key.key}` };
    const sample = await measureStart(cli(ROOT), ['serve'], env, url, async (pid) => {
      const ca = await readFile(path.join(existing, 'tls', 'ca.crt'));
      const list = await request(`${url}/files?limit=1`, { headers: auth, ca });
      const id = (JSON.parse(list.body) as { data: { id: string }[] }).data[0]!.id;
      return underLoad(pid, [`${url}/files/${id}`, `${url}/files?limit=20`], auth);
    });
    const bareLoad = await measureStart(process.execPath, ['-e', BARE], bareEnv, url, (pid) =>
      underLoad(pid, [`${url}/health`, `${url}/files`], {}),
    );

    const rows = cases.map((cs, i) => [
      cs.name,
      fmt(
        mid(i, (s) => s.ms),
        0,
      ),
      measured[i]!.map((s) => fmt(s.ms, 0)).join(' '),
      i === d
        ? '-'
        : fmt(
            mid(i, (s) => s.cpuMs),
            0,
          ),
      i === d
        ? '-'
        : fmt(
            mid(i, (s) => s.idleMb),
            1,
          ),
      i === d ? '-' : measured[i]!.map((s) => fmt(s.idleMb, 0)).join(' '),
      i === d ? '-' : String(mid(i, (s) => s.threads)),
    ]);
    const loadAvg = loads.map((l) => fmt(l, 1)).join(' ');
    console.log(
      `\nmediad serve → first /health 200 and idle RSS (${IDLE_MS / 1000} s after), median of ${ROUNDS} interleaved rounds; ${FILES} files in the existing data dir; 1-min load average at each round: ${loadAvg}\n`,
    );
    console.log(
      table(
        ['case', 'ms to /health', 'each round', 'CPU ms (all threads)', 'idle RSS MB', 'each round', 'threads'],
        rows,
      ),
    );
    const ratio = (x: number, f: (s: Start) => number) =>
      median(measured[x]!.map((s, r) => f(s) / f(measured[c]![r]!)));
    const startOk = mid(a, (s) => s.ms) < TARGET_START_MS;
    const idleOk = mid(a, (s) => s.idleMb) < TARGET_IDLE_MB;
    console.log(
      `\n(a)/(c) wall ${fmt(
        ratio(a, (s) => s.ms),
        2,
      )}×, CPU ${fmt(
        ratio(a, (s) => s.cpuMs),
        2,
      )}×, idle RSS ${fmt(
        ratio(a, (s) => s.idleMb),
        2,
      )}× (medians of the rounds' ratios)`,
    );
    console.log(
      `(b)/(c) wall ${fmt(
        ratio(b, (s) => s.ms),
        2,
      )}×, CPU ${fmt(
        ratio(b, (s) => s.cpuMs),
        2,
      )}×`,
    );
    if (BASELINE) {
      const a0 = 0;
      const vsBase = (f: (s: Start) => number) => median(measured[a]!.map((s, r) => f(s) / f(measured[a0]![r]!)));
      console.log(
        `(a)/(a0) wall ${fmt(
          vsBase((s) => s.ms),
          2,
        )}×, CPU ${fmt(
          vsBase((s) => s.cpuMs),
          2,
        )}×, idle RSS ${fmt(
          vsBase((s) => s.idleMb),
          2,
        )}×`,
      );
    }
    console.log(
      `start (a) ${fmt(
        mid(a, (s) => s.ms),
        0,
      )} ms   target < ${TARGET_START_MS} ms   ${verdict(startOk)}\nidle RSS (a) ${fmt(
        mid(a, (s) => s.idleMb),
        1,
      )} MB   target < ${TARGET_IDLE_MB} MB   ${verdict(idleOk)}`,
    );
    const l = sample.extra!;
    console.log(
      `\nRSS under load (wrk -t2 -c64, ${LOAD_SECONDS} s on GET /files/{id} then ${LOAD_SECONDS} s on GET /files?limit=20): mediad peak ${fmt(l.peakMb, 1)} MB, ${fmt(l.afterMb, 1)} MB ${IDLE_MS / 1000} s after, ${l.threads} threads (${l.rps.map((r) => fmt(r, 0)).join(' / ')} req/s); bare Fastify (/health, empty /files) peak ${fmt(bareLoad.extra!.peakMb, 1)} MB, ${fmt(bareLoad.extra!.afterMb, 1)} MB after, ${bareLoad.extra!.threads} threads`,
    );
    for (const e of [...l.errors, ...bareLoad.extra!.errors]) console.log(`  wrk reported: ${e}`);
    const file = await writeResults('startup', {
      date: new Date().toISOString(),
      node: process.version,
      rounds: ROUNDS,
      loadAverage: loads,
      seededFiles: FILES,
      seedMs: Math.round(seeded.ms),
      cases: cases.map((cs, i) => ({ name: cs.name, starts: measured[i] })),
      medians: cases.map((cs, i) => ({
        name: cs.name,
        ms: mid(i, (s) => s.ms),
        cpuMs: mid(i, (s) => s.cpuMs),
        idleMb: mid(i, (s) => s.idleMb),
        threads: mid(i, (s) => s.threads),
      })),
      underLoad: { mediad: l, bare: bareLoad.extra },
      targets: { startMs: TARGET_START_MS, idleMb: TARGET_IDLE_MB },
      pass: { start: startOk, idle: idleOk },
    });
    console.log(`\nJSON summary: ${path.relative(process.cwd(), file)}`);
  } finally {
    for (const dir of dirs) await removeDir(dir);
  }
}

await main();
