// What the request log costs the API: two mediad processes, each on its own data dir with 100,000
// files seeded, one recording every request (the default) and one with MEDIAD_REQUEST_LOG=false,
// measured with wrk in interleaved rounds (GET /files/{id}, the cheapest route, where recording
// weighs most, and GET /files?limit=20). A third process, also not recording, is the control: its
// ratio to the second (an A/A pair) is the noise floor of the run, which on a shared VM is as large
// as the effect measured. Prints req/s, p99 and server CPU per request for each, and the ratios
// on/off and control/off (medians of the rounds' paired ratios), then how long reading the log
// takes with the ~100,000 requests the run left in it. Run: npm run bench:request-log
import path from 'node:path';
import { FILES, seedFiles as seed } from './seed-files.js';
import {
  cpuMs,
  createKeyCli,
  fmt,
  freePort,
  median,
  mediadEnv,
  removeDir,
  request,
  startMediad,
  table,
  tempDataDir,
  verdict,
  wrk,
  writeResults,
  type WrkResult,
} from './lib.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** "At most a few percent": the recording server keeps at least 95% of the other's throughput. */
const TARGET_RATIO = 0.95;

async function instance(label: string, extra: Record<string, string>) {
  const dataDir = await tempDataDir(`reqlog-${label}`);
  const env = mediadEnv(dataDir, await freePort(), { MEDIAD_SERVE_WORKERS: 'false', ...extra });
  const key = await createKeyCli(env);
  const seeded = seed(path.join(dataDir, 'mediad.db'), key.project_id);
  const mediad = await startMediad(env);
  return { label, dataDir, key, seeded, mediad, auth: { Authorization: `Bearer ${key.key}` } };
}

const READS = 15;

/** The recording server's log as a user reads it, held at its limit by the run: a page, filters, a deep page, one by id. */
async function readTimes(s: Awaited<ReturnType<typeof instance>>): Promise<Record<string, number>> {
  const get = (p: string) => request(`${s.mediad.url}${p}`, { headers: s.auth, ca: s.mediad.ca });
  const first = JSON.parse((await get('/requests?limit=1')).body).data[0].id as string;
  const cases: Record<string, string> = {
    'GET /requests?limit=50': '/requests?limit=50',
    'status_class=2xx': '/requests?limit=50&status_class=2xx',
    'page 1000': '/requests?limit=50&page=1000',
    key_id: `/requests?limit=50&key_id=${s.key.key_id}`,
    'method=POST (none)': '/requests?limit=50&method=POST',
    'GET /requests/{id}': `/requests/${first}`,
  };
  const out: Record<string, number> = {};
  for (const [name, p] of Object.entries(cases)) {
    const ms: number[] = [];
    for (let i = 0; i < READS; i++) {
      const t = performance.now();
      const res = await get(p);
      ms.push(performance.now() - t);
      if (res.status !== 200) throw new Error(`${p} answered ${res.status}: ${res.body.slice(0, 200)}`);
    }
    out[name] = median(ms);
  }
  return out;
}

async function main(): Promise<void> {
  const on = await instance('on', {});
  const off = await instance('off', { MEDIAD_REQUEST_LOG: 'false' });
  const control = await instance('control', { MEDIAD_REQUEST_LOG: 'false' });
  const servers = [on, off, control];
  try {
    for (const s of servers) {
      const res = await request(`${s.mediad.url}/files/${s.seeded.sampleId}`, { headers: s.auth, ca: s.mediad.ca });
      if (res.status !== 200) throw new Error(`mediad (${s.label}) answered ${res.status}: ${res.body.slice(0, 300)}`);
    }
    const cases = [
      { name: 'GET /files/{id}', path: (s: typeof on) => `/files/${s.seeded.sampleId}` },
      { name: 'GET /files?limit=20', path: () => '/files?limit=20' },
    ];
    const measured = new Map<string, (WrkResult & { cpuUs: number })[]>();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const c of cases) {
        // Each round starts with another server, so none is always measured first or last.
        for (const s of servers.map((_, i) => servers[(i + round) % servers.length]!)) {
          const id = `${c.name} ${s.label}`;
          console.log(`round ${round}/${ROUNDS}, ${id}: 3 s warm-up, ${SECONDS} s measured`);
          const url = `${s.mediad.url}${c.path(s)}`;
          await wrk(url, s.auth, 3, 0);
          const cpuBefore = await cpuMs(s.mediad.pid);
          const r = await wrk(url, s.auth, SECONDS, 0);
          const cpuUs = (((await cpuMs(s.mediad.pid)) - cpuBefore) * 1000) / r.requests;
          if (r.errors) console.log(`  wrk reported: ${r.errors}`);
          measured.set(id, [...(measured.get(id) ?? []), { ...r, cpuUs }]);
        }
      }
    }
    // Let the last batches land, then count what the recording server stored and dropped.
    await new Promise((r) => setTimeout(r, 1000));
    const metrics = await request(`${on.mediad.url}/metrics`, { ca: on.mediad.ca });
    const dropped = Number(/^mediad_request_log_dropped_total (\d+)/m.exec(metrics.body)?.[1] ?? NaN);
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(path.join(on.dataDir, 'mediad.db'), { readonly: true });
    const stored = (db.prepare('select coalesce(sum(rows), 0) as n from request_log_segments').get() as { n: number })
      .n;
    db.close();
    const reads = await readTimes(on);

    const rows = [];
    const ratios: Record<string, number> = {};
    const controls: Record<string, number> = {};
    for (const c of cases) {
      const b = measured.get(`${c.name} off`)!;
      const toOff = (label: string) => median(measured.get(`${c.name} ${label}`)!.map((x, i) => x.rps / b[i]!.rps));
      ratios[c.name] = toOff('on');
      controls[c.name] = toOff('control');
      for (const label of ['on', 'off', 'control']) {
        const rs = measured.get(`${c.name} ${label}`)!;
        rows.push([
          `${c.name}, ${label === 'on' ? 'request log on' : label === 'off' ? 'request log off' : 'control (off)'}`,
          fmt(median(rs.map((r) => r.rps)), 0),
          fmt(median(rs.map((r) => r.p99Ms)), 2),
          fmt(median(rs.map((r) => r.cpuUs)), 0),
          rs.map((r) => fmt(r.rps, 0)).join(' '),
          label === 'off' ? '' : fmt(toOff(label), 3),
        ]);
      }
    }
    console.log(
      `\nrequest log on vs off (wrk -t2 -c64 -d${SECONDS}s, HTTPS keep-alive, ${FILES} files; median of ${ROUNDS} interleaved rounds)\n`,
    );
    console.log(table(['case', 'req/s', 'p99 ms', 'server CPU µs/req', 'req/s each round', 'x/off'], rows));
    const worst = Math.min(...Object.values(ratios));
    console.log(`\nrows stored ${stored}, dropped ${dropped}`);
    const floor = Math.max(...Object.values(controls).map((r) => Math.abs(1 - r)));
    console.log(
      `control/off (A/A): ${Object.values(controls)
        .map((r) => fmt(r, 3))
        .join(', ')}: this run resolves about ±${fmt(floor * 100, 0)}%`,
    );
    console.log(
      `\nreading the log it holds (median of ${READS} sequential requests each): ${Object.entries(reads)
        .map(([k, ms]) => `${k} ${fmt(ms, 1)} ms`)
        .join('; ')}`,
    );
    console.log(`worst ratio on/off ${fmt(worst, 3)}   target >= ${TARGET_RATIO}   ${verdict(worst >= TARGET_RATIO)}`);
    const file = await writeResults('request-log', {
      date: new Date().toISOString(),
      node: process.version,
      wrk: `-t2 -c64 -d${SECONDS}s --latency`,
      rounds: ROUNDS,
      results: Object.fromEntries(measured),
      ratios,
      controls,
      stored,
      dropped,
      reads,
      target: TARGET_RATIO,
      pass: worst >= TARGET_RATIO,
    });
    console.log(`JSON summary: ${path.relative(process.cwd(), file)}`);
  } finally {
    for (const s of servers) {
      await s.mediad.stop();
      await removeDir(s.dataDir);
    }
  }
}

await main();
