// A/B of the API's hot reads between two checkouts of mediad (say main before and after a change):
// both built, both serving copies of one seeded data dir at once, measured with wrk in short
// alternating windows, so the drift of this shared VM (a fifth over minutes) falls on both alike.
// Each pair gives a ratio B/A; the figure is the median of the pairs' ratios.
//   npm run bench:ab -- <checkout A> [<checkout B, default this one>]   (BENCH_PAIRS, BENCH_SECONDS, BENCH_SKIP_BUILD,
//   BENCH_CASES: of id, list and tasks, default id,list)
import { execFile, spawn } from 'node:child_process';
import { cp, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { FILES, seedFiles } from './seed-files.js';
import {
  cpuMs,
  createKeyCli,
  fmt,
  freePort,
  median,
  mediadEnv,
  removeDir,
  REPO,
  request,
  sleep,
  table,
  tempDataDir,
  wrk,
  writeResults,
} from './lib.js';

const run = promisify(execFile);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 6);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CASES = (process.env.BENCH_CASES ?? 'id,list').split(',');

interface Side {
  name: string;
  root: string;
  url: string;
  pid: number;
  ca: Buffer;
  stop(): Promise<void>;
}

async function serve(name: string, root: string, dataDir: string): Promise<Side> {
  const port = await freePort();
  const env = mediadEnv(dataDir, port);
  const proc = spawn(path.join(root, 'dist', 'src', 'cli.js'), ['serve'], {
    env,
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `https://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (proc.exitCode !== null) throw new Error(`${name}: mediad exited with ${proc.exitCode}`);
    try {
      const ca = await readFile(path.join(dataDir, 'tls', 'ca.crt'));
      if ((await request(`${url}/health`, { ca })).status === 200) {
        return {
          name,
          root,
          url,
          pid: proc.pid!,
          ca,
          async stop() {
            proc.kill('SIGTERM');
            await new Promise((r) => proc.once('exit', r));
          },
        };
      }
    } catch {
      /* not up yet */
    }
    await sleep(100);
  }
  proc.kill('SIGKILL');
  throw new Error(`${name}: mediad did not become healthy`);
}

async function main(): Promise<void> {
  const [a, b = REPO] = process.argv.slice(2).map((p) => path.resolve(p));
  if (!a) throw new Error('usage: npm run bench:ab -- <checkout A> [<checkout B>]');
  // BENCH_SKIP_BUILD=1: both checkouts are already built (e.g. A is a fixed baseline built once).
  for (const root of process.env.BENCH_SKIP_BUILD ? [] : [a, b]) {
    console.log(`building ${root}`);
    await run('npm', ['run', '--silent', 'build'], { cwd: root });
  }
  const seedDir = await tempDataDir('ab-seed');
  const dirs = [await tempDataDir('ab-a'), await tempDataDir('ab-b')];
  const sides: Side[] = [];
  try {
    // One data dir seeded (schema migrated by B's command), copied for each side.
    const key = await createKeyCli(mediadEnv(seedDir, 0));
    const seeded = seedFiles(path.join(seedDir, 'mediad.db'), key.project_id);
    for (const d of dirs) await cp(seedDir, d, { recursive: true });
    sides.push(await serve('A', a, dirs[0]!), await serve('B', b, dirs[1]!));
    const auth = { Authorization: `Bearer ${key.key}` };
    const cases = [
      { id: 'id', name: 'GET /files/{id}', path: `/files/${seeded.sampleId}` },
      { id: 'list', name: 'GET /files?limit=20', path: '/files?limit=20' },
      // No tasks are seeded: the list's statements (the page and its count) run on an empty table.
      { id: 'tasks', name: 'GET /tasks?status=completed&limit=20', path: '/tasks?status=completed&limit=20' },
    ].filter((c) => CASES.includes(c.id));
    for (const s of sides) {
      for (const c of cases) {
        const r = await request(`${s.url}${c.path}`, { headers: auth, ca: s.ca });
        if (r.status !== 200) throw new Error(`${s.name} ${c.name} answered ${r.status}: ${r.body.slice(0, 200)}`);
      }
    }
    const rows: (string | number)[][] = [];
    const summary = [];
    for (const c of cases) {
      const per = {
        A: { rps: [] as number[], cpu: [] as number[], main: [] as number[], p99: [] as number[] },
        B: { rps: [] as number[], cpu: [] as number[], main: [] as number[], p99: [] as number[] },
      };
      const ratios: number[] = [];
      const cpuRatios: number[] = [];
      const mainRatios: number[] = [];
      const p99Ratios: number[] = [];
      for (let i = 1; i <= PAIRS; i++) {
        // Alternate which side goes first, so a trend within a pair does not favour one side.
        const order = i % 2 ? sides : [...sides].reverse();
        const got: Record<string, { rps: number; cpu: number; main: number; p99: number }> = {};
        for (const s of order) {
          await wrk(`${s.url}${c.path}`, auth, 2, 0);
          const before = await cpuMs(s.pid);
          const mainBefore = await cpuMs(s.pid, true);
          const r = await wrk(`${s.url}${c.path}`, auth, SECONDS, 0);
          // All threads (the reader and log-writer threads included), and the main thread alone:
          // the one every request waits for, which bounds the req/s on a loaded machine.
          got[s.name] = {
            rps: r.rps,
            cpu: (((await cpuMs(s.pid)) - before) * 1000) / r.requests,
            main: (((await cpuMs(s.pid, true)) - mainBefore) * 1000) / r.requests,
            p99: r.p99Ms,
          };
        }
        for (const n of ['A', 'B'] as const) {
          per[n].rps.push(got[n]!.rps);
          per[n].cpu.push(got[n]!.cpu);
          per[n].main.push(got[n]!.main);
          per[n].p99.push(got[n]!.p99);
        }
        ratios.push(got.B!.rps / got.A!.rps);
        cpuRatios.push(got.B!.cpu / got.A!.cpu);
        mainRatios.push(got.B!.main / got.A!.main);
        p99Ratios.push(got.B!.p99 / got.A!.p99);
        console.log(
          `${c.name} pair ${i}/${PAIRS}: A ${fmt(got.A!.rps, 0)} req/s ${fmt(got.A!.cpu, 0)} µs (main ${fmt(got.A!.main, 0)}) p99 ${fmt(got.A!.p99, 1)} ms, B ${fmt(got.B!.rps, 0)} req/s ${fmt(got.B!.cpu, 0)} µs (main ${fmt(got.B!.main, 0)}) p99 ${fmt(got.B!.p99, 1)} ms`,
        );
      }
      rows.push([
        c.name,
        fmt(median(per.A.rps), 0),
        fmt(median(per.B.rps), 0),
        fmt(median(ratios), 3),
        fmt(median(per.A.cpu), 0),
        fmt(median(per.B.cpu), 0),
        fmt(median(cpuRatios), 3),
        fmt(median(per.A.main), 0),
        fmt(median(per.B.main), 0),
        fmt(median(mainRatios), 3),
        fmt(median(per.A.p99), 1),
        fmt(median(per.B.p99), 1),
        fmt(median(p99Ratios), 3),
      ]);
      summary.push({
        case: c.name,
        a: per.A,
        b: per.B,
        rpsRatio: median(ratios),
        cpuRatio: median(cpuRatios),
        mainRatio: median(mainRatios),
        p99Ratio: median(p99Ratios),
        ratios,
        cpuRatios,
        mainRatios,
        p99Ratios,
      });
    }
    const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
    console.log(
      `\nA: ${a}\nB: ${b}\n${PAIRS} pairs of ${SECONDS} s windows, wrk -t2 -c64, ${FILES} files seeded; load average at the end ${load}\n`,
    );
    console.log(
      table(
        [
          'case',
          'A req/s',
          'B req/s',
          'B/A req/s',
          'A µs/req',
          'B µs/req',
          'B/A µs/req',
          'A main µs',
          'B main µs',
          'B/A main µs',
          'A p99 ms',
          'B p99 ms',
          'B/A p99',
        ],
        rows,
      ),
    );
    const file = await writeResults('api-ab', {
      date: new Date().toISOString(),
      node: process.version,
      a,
      b,
      pairs: PAIRS,
      seconds: SECONDS,
      results: summary,
    });
    console.log(`\nJSON summary: ${path.relative(process.cwd(), file)}`);
  } finally {
    for (const s of sides) await s.stop();
    for (const d of [seedDir, ...dirs]) await removeDir(d);
  }
}

await main();
