// Helpers shared by the benchmarks (bench/*.ts). Loopback only; never imported by the test suite.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { readShebang } from '../test/helpers/shebang.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const RESULTS_DIR = path.join(REPO, 'bench', 'results');
// BENCH_MEDIAD_ROOT: run the mediad of another checkout (e.g. a copy with a candidate change) against the same benchmark.
const MEDIAD_ROOT = path.resolve(process.env.BENCH_MEDIAD_ROOT ?? REPO);
const CLI = path.join(MEDIAD_ROOT, 'src', 'cli.ts');
const run = promisify(execFile);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
export const mb = (bytes: number) => bytes / 1e6;
export const fmt = (n: number, digits = 1) => n.toFixed(digits);

// Below the kernel's ephemeral range, as the tests choose theirs (a listen(0) port could be taken
// by an outgoing connection of the same run before the server listens on it).
export { freePort } from '../test/helpers/free-port.js';

/** The environment every mediad child of a benchmark shares (CLI and server). */
export function mediadEnv(dataDir: string, port: number, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    MEDIAD_DATA_DIR: dataDir,
    MEDIAD_HOST: '127.0.0.1',
    MEDIAD_PORT: String(port),
    MEDIAD_PUBLIC_URL: `https://127.0.0.1:${port}`,
    MEDIAD_LOG_LEVEL: 'warn',
    // The limiter runs (its cost is part of the figure) but never refuses the load generator.
    MEDIAD_RATE_LIMIT_PER_MINUTE: '10000000',
    ...extra,
  };
}

export async function tempDataDir(label: string): Promise<string> {
  return mkdtemp(path.join(tmpdir(), `mediad-bench-${label}-`));
}

export interface CreatedKey {
  key: string;
  org_id: string;
  project_id: string;
  key_id: string;
}

export async function createKeyCli(env: NodeJS.ProcessEnv): Promise<CreatedKey> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', CLI, 'keys', 'create', '--org', 'bench', '--project', 'bench', '--json'],
    { env, cwd: MEDIAD_ROOT },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as CreatedKey;
}

export interface Child {
  proc: ChildProcess;
  pid: number;
  /** Sends SIGTERM and waits for the exit (e.g. so --cpu-prof gets written). */
  stop(): Promise<void>;
}

function wrap(proc: ChildProcess): Child {
  proc.stderr?.on('data', (d: Buffer) => process.stderr.write(`[child ${proc.pid}] ${d.toString()}`));
  return {
    proc,
    pid: proc.pid!,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000).then(() => proc.kill('SIGKILL'))]);
    },
  };
}

let built: Promise<unknown> | null = null;

/**
 * The mediad command as users run it: dist/src/cli.js (the bundle, built by `npm run build` once per
 * benchmark run), started through its own #! line so that its node flags and environment apply.
 */
export async function mediadCommand(): Promise<string> {
  built ??= run('npm', ['run', '--silent', 'build'], { cwd: MEDIAD_ROOT });
  await built;
  return path.join(MEDIAD_ROOT, 'dist', 'src', 'cli.js');
}

/**
 * The built command for `role` (serve, worker) through its #! line; with nodeArgs (e.g. --cpu-prof,
 * which node refuses in NODE_OPTIONS), node started with the #! line's flags and environment and these.
 */
export async function mediadInvocation(
  role: string,
  nodeArgs: string[] = [],
): Promise<{ command: string; args: string[]; env: Record<string, string> }> {
  const cli = await mediadCommand();
  if (nodeArgs.length === 0) return { command: cli, args: [role], env: {} };
  const { nodeFlags, env } = readShebang(cli);
  return { command: process.execPath, args: [...nodeFlags, ...nodeArgs, cli, role], env };
}

/**
 * `mediad serve` as users start it: the built command (dist/, compiled by `npm run build` once
 * per benchmark run) through its own #! line, with its node flags. With nodeArgs (e.g. --cpu-prof,
 * which node refuses in NODE_OPTIONS) node is started with the #! line's flags and these.
 */
export async function startMediad(
  env: NodeJS.ProcessEnv,
  nodeArgs: string[] = [],
): Promise<Child & { url: string; ca: Buffer }> {
  const { command, args, env: shebang } = await mediadInvocation('serve', nodeArgs);
  const proc = spawn(command, args, {
    env: { ...shebang, ...env },
    cwd: MEDIAD_ROOT,
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  const child = wrap(proc);
  const url = `https://127.0.0.1:${env.MEDIAD_PORT}`;
  const caFile = path.join(env.MEDIAD_DATA_DIR!, 'tls', 'ca.crt');
  for (let i = 0; i < 600; i++) {
    if (proc.exitCode !== null) throw new Error(`mediad exited with ${proc.exitCode}`);
    try {
      const ca = await readFile(caFile);
      if ((await request(`${url}/health`, { ca })).status === 200) return { ...child, url, ca };
    } catch {
      /* not up yet */
    }
    await sleep(100);
  }
  await child.stop();
  throw new Error('mediad did not become healthy within 60 s');
}

/** Re-runs `script` as a child in role `role`; the child prints "READY <port>" once listening. */
export async function startRole(
  script: string,
  role: string,
  args: string[] = [],
  nodeArgs: string[] = [],
): Promise<Child & { port: number }> {
  const proc = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script, '--child', role, ...args], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const child = wrap(proc);
  const lines = createInterface({ input: proc.stdout! });
  for await (const line of lines) {
    const m = /^READY (\d+)$/.exec(line);
    if (m) return { ...child, port: Number(m[1]) };
  }
  throw new Error(`child ${role} exited before it was ready`);
}

export interface Reply {
  status: number;
  body: string;
}

export function request(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string; ca?: Buffer },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      { method: opts.method ?? 'GET', headers: opts.headers, ca: opts.ca, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Resident set size of a process in bytes (VmRSS), or null once it is gone. */
export async function rssBytes(pid: number): Promise<number | null> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => null);
  const m = status && /^VmRSS:\s+(\d+) kB$/m.exec(status);
  return m ? Number(m[1]) * 1024 : null;
}

/** user + system ms of a /proc …/stat line (clock ticks of 10 ms). */
function statCpuMs(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // the command name may contain spaces
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime and stime, fields 14 and 15 of the whole line
}

/** CPU time of a process (all its threads), or with `mainThreadOnly` of its main thread alone, in ms. */
export async function cpuMs(pid: number, mainThreadOnly = false): Promise<number> {
  return statCpuMs(await readFile(mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8'));
}

/**
 * CPU time of a process's threads by group, in ms: the main thread, libvips' workers (named so),
 * and the rest (libuv's pool and V8's helpers, which Node 20 leaves unnamed). A thread that ended
 * is missing from the sums: compare readings of long-lived threads only.
 */
export async function threadCpuMs(pid: number): Promise<{ main: number; vips: number; other: number }> {
  const out = { main: 0, vips: 0, other: 0 };
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [])) {
    const [stat, comm] = await Promise.all([
      readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => ''),
      readFile(`/proc/${pid}/task/${tid}/comm`, 'utf8').catch(() => ''),
    ]);
    if (!stat) continue;
    const group = tid === String(pid) ? 'main' : comm.startsWith('libvips') ? 'vips' : 'other';
    out[group] += statCpuMs(stat);
  }
  return out;
}

export interface WrkResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: string | null;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function toMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!m) throw new Error(`cannot read wrk latency "${text}"`);
  return Number(m[1]) * UNIT_MS[m[2]!]!;
}

export function parseWrk(out: string): WrkResult {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  const p50 = /^\s+50%\s+(\S+)\s*$/m.exec(out); // wrk pads "1.13s " with a space
  const p99 = /^\s+99%\s+(\S+)\s*$/m.exec(out);
  const total = /(\d+) requests in/.exec(out);
  if (!rps || !p50 || !p99 || !total) throw new Error(`cannot parse wrk output:\n${out}`);
  const errors = [/Socket errors:.*$/m.exec(out)?.[0], /Non-2xx or 3xx responses:.*$/m.exec(out)?.[0]]
    .filter(Boolean)
    .join('; ');
  return {
    rps: Number(rps[1]),
    p50Ms: toMs(p50[1]!),
    p99Ms: toMs(p99[1]!),
    requests: Number(total[1]),
    errors: errors || null,
  };
}

/** wrk -t2 -c64 with --latency against a URL (a warm-up run first, its figures dropped). */
export async function wrk(
  url: string,
  headers: Record<string, string>,
  seconds: number,
  warmupSeconds = 3,
): Promise<WrkResult & { raw: string }> {
  const h = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  const args = (d: number) => ['-t2', '-c64', `-d${d}s`, '--latency', ...h, url];
  if (warmupSeconds > 0) await run('wrk', args(warmupSeconds));
  const { stdout } = await run('wrk', args(seconds), { maxBuffer: 1 << 20 });
  return { ...parseWrk(stdout), raw: stdout };
}

export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

export const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');

/** bench/results/<name>.json; BENCH_RESULTS_NAME renames it (e.g. for a BENCH_MEDIAD_ROOT candidate run). */
export async function writeResults(name: string, summary: unknown): Promise<string> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${process.env.BENCH_RESULTS_NAME ?? name}.json`);
  await writeFile(file, `${JSON.stringify(summary, null, 2)}\n`);
  return file;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time (µs) per profile node, skipping idle. */
function selfTimes(prof: CpuProfile): Map<number, number> {
  const idle = new Set(prof.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  const self = new Map<number, number>();
  prof.samples.forEach((id, i) => {
    if (!idle.has(id)) self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0));
  });
  return self;
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  /** Self time by function and by area (a package, a src/ directory, node internals, GC). */
  functions: [string, number][];
  areas: [string, number][];
  /** Inclusive time of the project's own functions (src/): what a request spends under each. */
  inclusive: [string, number][];
}

/** The busiest .cpuprofile in `dir` (each thread writes its own: the SQLite reader's, tsx's loader), summarised; idle excluded. */
export async function summarizeProfile(dir: string, top = 15): Promise<ProfileSummary> {
  let best: { file: string; prof: CpuProfile; self: Map<number, number>; busy: number } | null = null;
  for (const name of (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'))) {
    const prof = JSON.parse(await readFile(path.join(dir, name), 'utf8')) as CpuProfile;
    const self = selfTimes(prof);
    const busy = [...self.values()].reduce((a, b) => a + b, 0);
    if (!best || busy > best.busy) best = { file: path.join(dir, name), prof, self, busy };
  }
  if (!best) throw new Error(`no .cpuprofile in ${dir}`);
  const byId = new Map(best.prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of best.prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const describe = (id: number) => {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    // The built mediad runs from dist/src: its functions are named by their src/ path.
    const rel = url
      .replace(/^file:\/\//, '')
      .replace(`${MEDIAD_ROOT}/dist/`, '')
      .replace(`${MEDIAD_ROOT}/`, '')
      .replace(`${REPO}/`, '');
    const area = !url
      ? `(${functionName || 'native'})`
      : rel.startsWith('node_modules/')
        ? rel
            .split('/')
            .slice(0, rel.startsWith('node_modules/@') ? 3 : 2)
            .join('/')
        : rel.startsWith('src/')
          ? path.dirname(rel)
          : rel.startsWith('node:')
            ? rel
            : 'other';
    return {
      area,
      own: rel.startsWith('src/'),
      fn: `${functionName || '(anonymous)'} ${rel ? `${rel}:${lineNumber + 1}` : ''}`.trim(),
    };
  };
  const fns = new Map<string, number>();
  const areas = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, us] of best.self) {
    const d = describe(id);
    fns.set(d.fn, (fns.get(d.fn) ?? 0) + us);
    areas.set(d.area, (areas.get(d.area) ?? 0) + us);
    const seen = new Set<string>();
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const a = describe(n);
      if (a.own && !seen.has(a.fn)) {
        seen.add(a.fn);
        inclusive.set(a.fn, (inclusive.get(a.fn) ?? 0) + us);
      }
    }
  }
  const sorted = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, v]) => [k, v / 1000] as [string, number]);
  return {
    file: best.file,
    totalMs: best.busy / 1000,
    functions: sorted(fns),
    areas: sorted(areas),
    inclusive: sorted(inclusive),
  };
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** An administrator's URL of the PostgreSQL the benchmarks use (BENCH_PG_URL). */
export const ADMIN_PG = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A new, empty database `name` on ADMIN_PG's server (dropped first if a run left it), and its URL. */
export async function freshPg(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: ADMIN_PG });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(ADMIN_PG);
  url.pathname = `/${name}`;
  return url.toString();
}
