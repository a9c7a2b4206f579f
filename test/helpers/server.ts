import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Agent, request } from 'undici';
import { loadConfig } from '../../src/config.js';
import { connect, migrate, openDatabase, type Db } from '../../src/db/connect.js';
import { createKey } from '../../src/services/people/keys.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { localTlsDir } from '../../src/tls/ca-file.js';
import { ensureLocalTls } from '../../src/tls/local-ca.js';
import { Contract } from './contract.js';
import { freePort } from './free-port.js';
import { ROOT } from './paths.js';

export { freePort };

export interface ApiResponse<T = any> {
  status: number;
  headers: Record<string, string>;
  json: T;
  text: string;
}

export interface TestServer {
  server: RunningServer;
  base: string;
  dataDir: string;
  /** The server's own PostgreSQL database when the suite runs on one (MEDIAD_TEST_DATABASE_URL). */
  databaseUrl: string | undefined;
  agent: Agent;
  /** A new key for org/project (created when missing). */
  key(org?: string, project?: string): Promise<{ key: string; org_id: string; project_id: string; key_id: string }>;
  call<T = any>(method: string, urlPath: string, opts?: CallOptions): Promise<ApiResponse<T>>;
  stop(): Promise<void>;
}

export interface CallOptions {
  key?: string;
  body?: unknown;
  raw?: string | Buffer;
  headers?: Record<string, string>;
  /** false: do not hold this answer to /openapi.json (a test of what the document says). */
  contract?: boolean;
}

/**
 * A database at the current schema to copy test databases from (CREATE DATABASE … TEMPLATE): on
 * this machine a copy takes ~0.1 s where migrating a new database takes ~0.4 s, for each of the
 * PostgreSQL pass's servers. Named after the migrations' text, so a changed migration makes another;
 * made once per PostgreSQL server (under an advisory lock, as a test run's processes start together),
 * under a temporary name renamed when migrated (and dropped if the migration fails), so no half-migrated
 * template is ever used.
 */
async function makeMigratedTemplate(admin: pg.Client, adminUrl: string): Promise<string> {
  const dir = path.join(ROOT, 'src/db/migrations');
  const hash = createHash('sha256');
  for (const file of (await fs.readdir(dir)).sort()) hash.update(file).update(await fs.readFile(path.join(dir, file)));
  const name = `mediad_template_${hash.digest('hex').slice(0, 16)}`;
  await admin.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
  try {
    if ((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount) return name;
    const making = `${name}_${process.pid}`;
    await admin.query(`DROP DATABASE IF EXISTS ${making}`);
    await admin.query(`CREATE DATABASE ${making}`);
    const url = new URL(adminUrl);
    url.pathname = `/${making}`;
    const opened = openDatabase({ dialect: 'postgres', url: url.toString(), poolSize: 1 });
    try {
      await migrate(opened.db);
    } catch (err) {
      await opened.close();
      await admin.query(`DROP DATABASE IF EXISTS ${making} WITH (FORCE)`);
      throw err;
    }
    await opened.close();
    await admin.query(`ALTER DATABASE ${making} RENAME TO ${name}`);
    return name;
  } finally {
    await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
  }
}

let template: Promise<string> | undefined;
/** The template's name, found or made once per test process (a failure is tried again by the next server). */
function migratedTemplate(admin: pg.Client, adminUrl: string): Promise<string> {
  template ??= makeMigratedTemplate(admin, adminUrl).catch((err: unknown) => {
    template = undefined;
    throw err;
  });
  return template;
}

/**
 * With MEDIAD_TEST_DATABASE_URL=postgres://… each test server gets a fresh PostgreSQL
 * database, dropped at stop; otherwise the server's default SQLite file is used. `migrated`: a copy
 * of a database already at the current schema (what a server would make of an empty one at start);
 * otherwise empty, for tests of the migrations themselves.
 */
export async function testDatabase({ migrated = false }: { migrated?: boolean } = {}) {
  const adminUrl = process.env.MEDIAD_TEST_DATABASE_URL;
  if (!adminUrl) return null;
  const name = `mediad_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const template = migrated ? ` TEMPLATE ${await migratedTemplate(admin, adminUrl)}` : '';
    await admin.query(`CREATE DATABASE ${name}${template}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    dialect: 'postgres' as const,
    url: url.toString(),
    poolSize: 10,
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** A migrated database for a unit test: a fresh PostgreSQL one with MEDIAD_TEST_DATABASE_URL, else SQLite in a new directory; `close` removes it. */
export async function unitDatabase(prefix: string): Promise<{ db: Db; close(): Promise<void> }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  const database = await testDatabase();
  const db = connect(database ?? { dialect: 'sqlite', file: path.join(dir, 'db.sqlite') });
  await migrate(db);
  return {
    db,
    async close() {
      await db.destroy();
      await database?.drop();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Puts a local CA and server certificate for localhost into a new data directory, made once a month
 * per checkout by mediad's own code (ensureLocalTls) and kept in .test-cache: a new data directory
 * otherwise makes two RSA keys, ~0.4 s of CPU each, and a test run starts some 200 servers. The
 * server finds them valid and uses them as it would its own; making them at a first start is what
 * the tests that start `mediad serve` on a new data directory (first-hour, cli-first-hour) cover.
 */
async function seedTls(dataDir: string): Promise<void> {
  const cache = path.join(ROOT, '.test-cache');
  const shared = path.join(cache, `tls-${new Date().toISOString().slice(0, 7)}`);
  if (!(await fs.stat(path.join(shared, 'server.crt')).catch(() => null))) {
    await fs.mkdir(cache, { recursive: true });
    const made = await fs.mkdtemp(path.join(cache, 'tls-new-'));
    await ensureLocalTls({ dir: made, hosts: ['localhost'] });
    // Another test process may have made its own meanwhile: the first rename wins, the rest are dropped.
    await fs.rename(made, shared).catch(() => fs.rm(made, { recursive: true, force: true }));
  }
  await fs.cp(shared, localTlsDir(dataDir), { recursive: true });
}

/** A test's mediad on 127.0.0.1:`port` with its data in `dataDir`, silent and without a rate limit (tests poll hard; the rate-limit tests set one of their own). */
export function loopbackEnv(dataDir: string, port: number): Record<string, string> {
  return {
    MEDIAD_DATA_DIR: dataDir,
    MEDIAD_HOST: '127.0.0.1',
    MEDIAD_PORT: String(port),
    MEDIAD_PUBLIC_URL: `https://localhost:${port}`,
    MEDIAD_LOG_LEVEL: 'silent',
    MEDIAD_RATE_LIMIT_PER_MINUTE: '0',
  };
}

/**
 * Starts mediad over real HTTPS on 127.0.0.1 with a fresh data dir; `env` overrides configuration.
 * `ownTls`: the server makes its own CA and certificate, as at a first start, instead of the shared ones.
 */
export async function startTestServer(
  env: Record<string, string> = {},
  { ownTls = false }: { ownTls?: boolean } = {},
): Promise<TestServer> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-test-'));
  if (!ownTls) await seedTls(dataDir);
  const database = await testDatabase({ migrated: true });
  let port = 0;
  let server: RunningServer | undefined;
  // Another test process may take the free port before this server listens: try the next one.
  for (let attempt = 1; !server; attempt++) {
    port = await freePort();
    const config = loadConfig({
      ...loopbackEnv(dataDir, port),
      // scrypt at the lowest allowed cost (16 MiB, a few ms): the product's default is OWASP's 2^17.
      MEDIAD_PASSWORD_SCRYPT_LOG_N: '14',
      ...env,
    });
    if (database) Object.assign(config, { database });
    server = await startServer(config).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE' && attempt < 5) return undefined;
      throw err;
    });
  }
  const ca = await fs.readFile(server.caCertPath!, 'utf8');
  const agent = new Agent({ connect: { ca, servername: 'localhost' }, connections: 64 });
  const base = `https://localhost:${port}`;

  const call = async <T>(method: string, urlPath: string, opts: CallOptions = {}): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    let body: string | Buffer | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const url = urlPath.startsWith('https://') ? urlPath : `${base}${urlPath}`;
    const res = await request(url, { method: method as 'GET', headers, body, dispatcher: agent });
    const text = await res.body.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    const flat: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers))
      if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
    // Every answer is held to /openapi.json (helpers/contract.ts) unless a test opts out.
    if (opts.contract !== false && url.startsWith(base)) {
      const problems = (await contract()).check(method, url, res.statusCode, flat, text);
      if (problems.length > 0)
        throw new Error(
          `the answer is not what /openapi.json documents: ${problems.join('; ')}\n${text.slice(0, 600)}`,
        );
    }
    return { status: res.statusCode, headers: flat, json, text };
  };

  let loaded: Promise<Contract> | undefined;
  const contract = () =>
    (loaded ??= (async () => {
      const fetchDoc = async (q: string) =>
        (await (await request(`${base}/openapi.json${q}`, { dispatcher: agent })).body.json()) as Record<string, any>;
      return new Contract({ envelope: await fetchDoc(''), bare: await fetchDoc('?generation=bare') });
    })());

  return {
    server,
    base,
    dataDir,
    databaseUrl: database?.url,
    agent,
    key: (org = 'acme', project = 'default') => createKey(server.runtime.deps, org, project),
    call,
    async stop() {
      await agent.close();
      await server.close();
      await database?.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
