// What recording costs in CPU, without HTTP or the VM's noise between two servers: Recorder.record
// and its flushes (every 3,000 requests, about 250 ms of a busy server) into a SQLite file that
// already holds 100,000 rows, measured with process.cpuUsage over 60,000 requests (the request
// ids' own cost, paid with or without the log, subtracted). ROOT: the checkout whose src/ is
// measured (another checkout, e.g. one at the commit before a change). Run:
// node --import tsx bench/request-log-cpu.ts [ROOT]
import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { REPO, tempDataDir } from './lib.js';

const root = path.resolve(process.argv[2] ?? REPO);
const { migrate, openDatabase } = (await import(`${root}/src/db/connect.ts`)) as typeof import('../src/db/connect.js');
const { Recorder } = (await import(
  `${root}/src/services/recorder.ts`
)) as typeof import('../src/services/operations/recorder.js');
const { newId } = (await import(`${root}/src/ids.ts`)) as typeof import('../src/ids.js');
type Deps = import('../src/deps.js').Deps;
type AuthContext = import('../src/services/access.js').AuthContext;

const dir = await tempDataDir('reqlog-cpu');
const { db, close } = openDatabase({ dialect: 'sqlite', file: path.join(dir, 'mediad.db') });
await migrate(db);
const deps = {
  db,
  clock: { now: () => new Date() },
  log: pino({ level: 'silent' }),
  config: {
    database: { dialect: 'sqlite', file: path.join(dir, 'mediad.db') },
    requestLog: { enabled: true, days: 7, maxRows: 1_000_000 },
  },
} as unknown as Deps;
const recorder = new Recorder(deps);
const auth: AuthContext = {
  orgId: 'org_aaaaaaaaaaaaaaaa',
  projectId: 'prj_aaaaaaaaaaaaaaaa',
  apiVersion: '2025-08-20',
  principal: { type: 'key', keyId: 'key_aaaaaaaaaaaaaaaa', scopes: ['full'] },
};

async function run(n: number, url: string): Promise<void> {
  for (let i = 0; i < n; i++) {
    recorder.record({
      id: newId('request'),
      auth,
      method: 'GET',
      route: '/files/:id',
      url,
      status: 200,
      ms: 0.8,
    });
    if (i % 3000 === 2999) await recorder.flush();
  }
  await recorder.flush();
}
const cpuUs = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

const N = 60_000;
await run(100_000, '/files/file_aaaaaaaaaaaaaaaa');
const t0 = cpuUs();
for (let i = 0; i < N; i++) newId('request');
const idUs = (cpuUs() - t0) / N;
for (const url of ['/files/file_aaaaaaaaaaaaaaaa', '/files?limit=20&page=3&token=tok_aaaaaaaa']) {
  const t1 = cpuUs();
  await run(N, url);
  console.log(
    `${path.relative(process.cwd(), root) || '.'}  ${url}  CPU per recorded request ${((cpuUs() - t1) / N - idUs).toFixed(2)} µs`,
  );
}
await close();
fs.rmSync(dir, { recursive: true, force: true });
