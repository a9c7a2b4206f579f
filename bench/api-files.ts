// GET /files/{id} and GET /files?limit=20 of mediad (100,000 files seeded) against a bare
// Fastify HTTPS route with the same certificate and a body of the same shape, all measured
// with wrk in one run on loopback, in interleaved rounds. Run: npm run bench:api  (add --profile for a CPU profile).
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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
  startRole,
  summarizeProfile,
  table,
  tempDataDir,
  verdict,
  wrk,
  writeResults,
  type WrkResult,
} from './lib.js';

const SCRIPT = fileURLToPath(import.meta.url);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGET_RATIO = 0.6;
const TARGET_LIST_P99_MS = 20;

/** The competitor: Fastify over HTTPS, one route, a fixed object serialised per request. */
async function bareServer(tlsDir: string, bodyFile: string, listBodyFile: string): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const [cert, key, body, listBody] = await Promise.all([
    readFile(path.join(tlsDir, 'server.crt'), 'utf8'),
    readFile(path.join(tlsDir, 'server.key'), 'utf8'),
    readFile(bodyFile, 'utf8'),
    readFile(listBodyFile, 'utf8'),
  ]);
  const payload = JSON.parse(body) as unknown;
  const listPayload = JSON.parse(listBody) as unknown;
  const app = Fastify({ https: { cert, key }, logger: false });
  app.get('/bare', async () => payload);
  app.get('/bare-list', async () => listPayload);
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.stdout.write(`READY ${(app.server.address() as { port: number }).port}\n`);
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

async function main(): Promise<void> {
  const profile = process.argv.includes('--profile');
  const dataDir = await tempDataDir('api');
  const port = await freePort();
  const env = mediadEnv(dataDir, port);
  const children: { stop(): Promise<void> }[] = [];
  try {
    const key = await createKeyCli(env);
    const seeded = seed(path.join(dataDir, 'mediad.db'), key.project_id);
    console.log(`seeded ${FILES} files in ${fmt(seeded.ms / 1000, 2)} s`);
    const profDir = path.join(dataDir, 'prof');
    const mediad = await startMediad(env, profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []);
    children.push(mediad);
    const auth = { Authorization: `Bearer ${key.key}` };

    const one = await request(`${mediad.url}/files/${seeded.sampleId}`, { headers: auth, ca: mediad.ca });
    const list = await request(`${mediad.url}/files?limit=20`, { headers: auth, ca: mediad.ca });
    if (one.status !== 200 || list.status !== 200)
      throw new Error(`mediad answered ${one.status}/${list.status}: ${one.body.slice(0, 300)}`);
    const listTotal = (JSON.parse(list.body) as { meta: { total: number } }).meta.total;
    if (listTotal !== FILES) throw new Error(`GET /files total is ${listTotal}, expected ${FILES}`);
    const bodyFile = path.join(dataDir, 'bare-body.json');
    const listBodyFile = path.join(dataDir, 'bare-list-body.json');
    await writeFile(bodyFile, one.body);
    await writeFile(listBodyFile, list.body);
    const bare = await startRole(SCRIPT, 'bare', [path.join(dataDir, 'tls'), bodyFile, listBodyFile]);
    children.push(bare);
    const bareUrl = `https://127.0.0.1:${bare.port}/bare`;
    const bareReply = await request(bareUrl, { ca: mediad.ca });
    console.log(
      `bodies: GET /files/{id} ${one.body.length} B, GET /files?limit=20 ${list.body.length} B, bare ${bareReply.body.length} B`,
    );

    const cases = [
      { name: '(a) mediad GET /files/{id}', url: `${mediad.url}/files/${seeded.sampleId}` },
      { name: '(b) mediad GET /files?limit=20', url: `${mediad.url}/files?limit=20` },
      { name: '(c) bare Fastify HTTPS route', url: bareUrl },
      { name: '(d) bare route, list-sized body', url: `${bareUrl}-list` },
      // The bare API generation (2025-08-20): the same reads answered without the envelope.
      {
        name: '(e) mediad GET /files/{id}, 2025-08-20',
        url: `${mediad.url}/files/${seeded.sampleId}`,
        version: '2025-08-20',
      },
      {
        name: '(f) mediad GET /files?limit=20, 2025-08-20',
        url: `${mediad.url}/files?limit=20`,
        version: '2025-08-20',
      },
    ];
    const headersOf = (c: { version?: string }) => (c.version ? { ...auth, 'Accept-Version': c.version } : auth);
    // Rounds interleave the cases, so a slow spell of this shared VM (its speed drifts by a
    // fifth over minutes) falls on every case alike; each figure is the median over the rounds.
    const measured = cases.map(() => [] as (WrkResult & { cpuUsPerRequest: number })[]);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [i, c] of cases.entries()) {
        // BENCH_ONLY=b (say) measures one case only, e.g. to profile it alone; the table then shows zeros for the others.
        if (process.env.BENCH_ONLY && !c.name.startsWith(`(${process.env.BENCH_ONLY})`)) continue;
        console.log(`round ${round}/${ROUNDS}, wrk ${c.name}: 3 s warm-up, ${SECONDS} s measured`);
        await wrk(c.url, headersOf(c), 3, 0);
        const server = c.url.startsWith(bareUrl) ? bare.pid : mediad.pid;
        const cpuBefore = await cpuMs(server);
        const r = await wrk(c.url, headersOf(c), SECONDS, 0);
        // The server's own CPU per answer: what the code costs, apart from wrk sharing the two cores.
        const cpuUsPerRequest = (((await cpuMs(server)) - cpuBefore) * 1000) / r.requests;
        if (r.errors) console.log(`  wrk reported: ${r.errors}`);
        measured[i]!.push({ ...r, cpuUsPerRequest });
      }
    }
    const results = cases.map((c, i) => {
      const rounds = measured[i]!;
      if (rounds.length === 0)
        return { ...c, rps: 0, p50Ms: 0, p99Ms: 0, requests: 0, cpuUsPerRequest: 0, rounds, errors: 'skipped' };
      const mid = (f: (r: (typeof rounds)[0]) => number) => median(rounds.map(f));
      return {
        ...c,
        rps: mid((r) => r.rps),
        p50Ms: mid((r) => r.p50Ms),
        p99Ms: mid((r) => r.p99Ms),
        requests: mid((r) => r.requests),
        cpuUsPerRequest: mid((r) => r.cpuUsPerRequest),
        rounds,
        errors: rounds.map((r) => r.errors).find(Boolean) ?? null,
      };
    });
    const [a, b, c] = results as [(typeof results)[0], (typeof results)[0], (typeof results)[0]];
    // Paired within each round (measured seconds apart), then the median over the rounds.
    const ratio = a.requests && c.requests ? median(a.rounds.map((x, i) => x.rps / c.rounds[i]!.rps)) : null; // null: a case was skipped (BENCH_ONLY)
    const ratioOk = ratio === null ? null : ratio >= TARGET_RATIO;
    const p99Ok = b.requests ? b.p99Ms < TARGET_LIST_P99_MS : null;
    const judge = (ok: boolean | null) => (ok === null ? 'n/a' : verdict(ok));

    let prof: Awaited<ReturnType<typeof summarizeProfile>> | null = null;
    if (profile) {
      await mediad.stop();
      prof = await summarizeProfile(profDir);
    }
    console.log(
      `\nmediad API vs bare Fastify (wrk -t2 -c64 -d${SECONDS}s, HTTPS keep-alive, ${FILES} files seeded; median of ${ROUNDS} interleaved rounds)\n`,
    );
    const each = (r: (typeof results)[0], f: (x: WrkResult) => number, digits: number) =>
      r.rounds.map((x) => fmt(f(x), digits)).join(' ');
    console.log(
      table(
        ['case', 'req/s', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'req/s each round', 'p99 ms each round'],
        results.map((r) => [
          r.name,
          fmt(r.rps, 0),
          fmt(r.p50Ms, 2),
          fmt(r.p99Ms, 2),
          fmt(r.cpuUsPerRequest, 0),
          each(r, (x) => x.rps, 0),
          each(r, (x) => x.p99Ms, 1),
        ]),
      ),
    );
    console.log(
      `\nratio (a)/(c) req/s (median of the rounds' ratios)  ${ratio === null ? '-' : fmt(ratio, 3)}   target >= ${TARGET_RATIO}   ${judge(ratioOk)}`,
    );
    console.log(`list p99            ${fmt(b.p99Ms, 2)} ms   target < ${TARGET_LIST_P99_MS} ms   ${judge(p99Ok)}`);
    if (prof) {
      console.log(
        `\nCPU profile of mediad (${prof.file}), busy self time ${fmt(prof.totalMs / 1000, 1)} s (warm-ups included):`,
      );
      console.log(
        table(
          ['area', 'ms', '%'],
          prof.areas.map(([k, v]) => [k, fmt(v, 0), fmt((100 * v) / prof!.totalMs, 1)]),
        ),
      );
      console.log('');
      console.log(
        table(
          ['function (self)', 'ms', '%'],
          prof.functions.map(([k, v]) => [k.slice(0, 110), fmt(v, 0), fmt((100 * v) / prof!.totalMs, 1)]),
        ),
      );
      console.log('');
      console.log(
        table(
          ['src/ function (inclusive)', 'ms', '%'],
          prof.inclusive.map(([k, v]) => [k.slice(0, 110), fmt(v, 0), fmt((100 * v) / prof!.totalMs, 1)]),
        ),
      );
    }
    // A profiled run is slower: its figures go to their own file, the plain run's stay comparable.
    const file = await writeResults(
      profile ? `api-files-profile${process.env.BENCH_ONLY ? `-${process.env.BENCH_ONLY}` : ''}` : 'api-files',
      {
        date: new Date().toISOString(),
        node: process.version,
        cpus: 2,
        seededFiles: FILES,
        seedMs: Math.round(seeded.ms),
        wrk: `-t2 -c64 -d${SECONDS}s --latency`,
        rounds: ROUNDS,
        bodyBytes: { one: one.body.length, list: list.body.length, bare: bareReply.body.length },
        results,
        ratio,
        targets: { ratio: TARGET_RATIO, listP99Ms: TARGET_LIST_P99_MS },
        pass: { ratio: ratioOk, listP99: p99Ok },
        profile: prof && {
          totalMs: prof.totalMs,
          areas: prof.areas,
          functions: prof.functions,
          inclusive: prof.inclusive,
        },
      },
    );
    console.log(`\nJSON summary: ${path.relative(process.cwd(), file)}`);
  } finally {
    for (const c of children.reverse()) await c.stop();
    if (process.env.BENCH_KEEP_DATA) console.log(`data dir kept: ${dataDir}`);
    else await removeDir(dataDir);
  }
}

if (process.argv[2] === '--child') await bareServer(process.argv[4]!, process.argv[5]!, process.argv[6]!);
else await main();
