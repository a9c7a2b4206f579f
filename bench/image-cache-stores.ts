// What storing an image-URL result costs, A/B between two checkouts (say main before and after a
// change to the cache's budgets): database queries per store (independent of the machine's load)
// and CPU time per store, in three states of the cache — within its budgets, full by the whole
// cache's budget, full by the project's own budget (each store then evicts about one result).
//   node --import tsx bench/image-cache-stores.ts <checkout A> [<checkout B, default this one>]
// Each side runs in a child process of its own (module state, such as the running counts, is
// per process), sides alternating, BENCH_ROUNDS times (default 3); CPU is the median.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { fmt, median, REPO, table } from './lib.js';

const run = promisify(execFile);
const STATES = ['within', 'whole-full', 'project-full'] as const;
type State = (typeof STATES)[number];
const FULL = 100_000;
const RESULT = 20_000;
const STORES = 500;

interface Figures {
  queries: number;
  cpuMs: number;
}

/** One side, in this process: a test server of `root` (its modules typed as this checkout's), then STORES stores into one project. */
async function side(root: string, state: State): Promise<Figures | null> {
  const helpers = (await import(
    path.join(root, 'test/helpers/server.ts')
  )) as typeof import('../test/helpers/server.js');
  const cache = (await import(
    path.join(root, 'src/services/media/image-url-cache.ts')
  )) as typeof import('../src/services/media/image-url-cache.js');
  const t = await helpers.startTestServer({
    MEDIAD_IMAGE_URL_CACHE_BYTES: String(state === 'whole-full' ? FULL : 1024 ** 3),
  });
  try {
    const k = await t.key('bench', 'stores');
    // The settings row, as a project's first image URL makes it.
    await t.call('GET', '/project/image-url-key', { key: k.key });
    if (state === 'project-full') {
      const set = await t.call('PATCH', '/project/image-url-settings', { key: k.key, body: { cache_bytes: FULL } });
      if (set.status !== 200) return null; // a checkout without budgets per project
    }
    let queries = 0;
    const base = t.server.runtime.deps;
    const db = base.db.withPlugin({
      transformQuery: (args) => {
        queries++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    const deps = { ...base, db };
    const data = randomBytes(RESULT);
    const store = (i: number) =>
      cache.storeDerivative(deps, {
        id: `bench${i}`,
        projectId: k.project_id,
        fileId: 'file_bench',
        type: 'image/jpeg',
        data,
      });
    // Warm: the counts made, the cache full where it is to be.
    for (let i = 0; i < 50; i++) await store(i);
    const q0 = queries;
    const c0 = process.cpuUsage();
    for (let i = 50; i < 50 + STORES; i++) await store(i);
    const cpu = process.cpuUsage(c0);
    return { queries: (queries - q0) / STORES, cpuMs: (cpu.user + cpu.system) / 1000 / STORES };
  } finally {
    await t.stop();
  }
}

async function main(): Promise<void> {
  const a = process.argv[2];
  if (!a) throw new Error('usage: bench/image-cache-stores.ts <checkout A> [<checkout B>]');
  const b = process.argv[3] ?? REPO;
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const got = new Map<string, (Figures | null)[]>();
  for (let r = 0; r < rounds; r++)
    for (const state of STATES)
      for (const root of [a, b]) {
        const { stdout } = await run(
          process.execPath,
          ['--import', 'tsx', import.meta.filename, '--side', root, state],
          {
            cwd: REPO,
            maxBuffer: 1 << 24,
          },
        );
        const line = stdout.trim().split('\n').at(-1) ?? 'null';
        const key = `${state} ${root}`;
        got.set(key, [...(got.get(key) ?? []), JSON.parse(line) as Figures | null]);
      }
  const rows = STATES.map((state) => {
    const cell = (root: string) => {
      const runs = got.get(`${state} ${root}`) ?? [];
      const ok = runs.filter((f): f is Figures => f !== null);
      if (ok.length === 0) return { q: 'n/a', cpu: 'n/a' };
      return { q: fmt(median(ok.map((f) => f.queries)), 2), cpu: fmt(median(ok.map((f) => f.cpuMs)), 3) };
    };
    const [x, y] = [cell(a), cell(b)];
    return [state, x.q, y.q, x.cpu, y.cpu];
  });
  console.log(`A = ${a}\nB = ${b}\n${STORES} stores of ${RESULT} B per run, ${rounds} rounds`);
  console.log(table(['cache', 'queries/store A', 'queries/store B', 'CPU ms/store A', 'CPU ms/store B'], rows));
}

if (process.argv[2] === '--side') console.log(JSON.stringify(await side(process.argv[3]!, process.argv[4] as State)));
else await main();
