import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Agent, request } from 'undici';
import type { ApiResponse } from './server.js';
import type { Kysely } from 'kysely';
import { openDatabase } from '../../src/db/connect.js';
import type { Database } from '../../src/db/schema.js';
import { systemClock } from '../../src/deps.js';
import { createKey } from '../../src/services/people/keys.js';
import { freePort, loopbackEnv, testDatabase } from './server.js';
import { MEDIAD } from './paths.js';

/** `mediad serve` as a process of its own (so a test can SIGKILL it), on a data dir the test keeps. */
export interface ServeProcess {
  child: ChildProcess;
  base: string;
  call<T = any>(method: string, urlPath: string, opts?: { key?: string; body?: unknown }): Promise<ApiResponse<T>>;
  /** What the process wrote to stdout so far (its log), when spawned with `{ stdout: true }`. */
  stdout(): string;
  /** Resolves with the signal or exit code when the process ends. */
  exited: Promise<NodeJS.Signals | number | null>;
  stop(): Promise<void>;
}

export async function spawnServe(
  dataDir: string,
  env: Record<string, string> = {},
  opts: { stdout?: boolean } = {},
): Promise<ServeProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [...MEDIAD, 'serve'], {
    env: {
      ...process.env,
      ...loopbackEnv(dataDir, port),
      MEDIAD_WORKER_POLL_MS: '50',
      MEDIAD_WORKER_LEASE_SECONDS: '1',
      ...env,
    },
    stdio: ['ignore', opts.stdout ? 'pipe' : 'ignore', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code)),
  );
  const base = `https://localhost:${port}`;
  let agent: Agent | null = null;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`mediad serve exited before answering (${child.signalCode ?? child.exitCode})`);
    try {
      agent ??= new Agent({
        connect: { ca: await fs.readFile(path.join(dataDir, 'tls', 'ca.crt'), 'utf8'), servername: 'localhost' },
      });
      const res = await request(`${base}/health`, { dispatcher: agent });
      await res.body.dump();
      if (res.statusCode === 200) break;
    } catch {
      // not listening yet, or the CA not written yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('mediad serve did not answer /health within 60 s');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const dispatcher = agent!;
  const call = async <T>(
    method: string,
    urlPath: string,
    opts: { key?: string; body?: unknown } = {},
  ): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = {};
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await request(`${base}${urlPath}`, {
      method: method as 'GET',
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      dispatcher,
    });
    const text = await res.body.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.statusCode, headers: {}, json, text };
  };
  let stopping: Promise<void> | undefined;
  return {
    child,
    base,
    call,
    stdout: () => out,
    exited,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          await exited;
        }
        await dispatcher.close();
      })();
      return stopping;
    },
  };
}

/** `mediad serve` processes sharing one PostgreSQL database, each with an agent that trusts its CA. */
export interface ServesOnPostgres {
  servers: ServeProcess[];
  agents: Agent[];
  /** A key made in the database before the processes started. */
  key: { key: string; project_id: string };
  /** The database, open in the test process, for assertions on its rows. */
  db: Kysely<Database>;
  stop(): Promise<void>;
}

/**
 * One `mediad serve` per data dir given (the same dir twice: a shared data dir) on a new database
 * of MEDIAD_TEST_DATABASE_URL, without workers. stop() ends the processes and drops the database;
 * the data dirs are the caller's.
 */
export async function servesOnPostgres(
  dataDirs: string[],
  env: Record<string, string>,
  names: { org: string; project: string },
): Promise<ServesOnPostgres> {
  const database = await testDatabase({ migrated: true });
  if (!database) throw new Error('servesOnPostgres needs MEDIAD_TEST_DATABASE_URL');
  const opened = openDatabase(database);
  const servers: ServeProcess[] = [];
  const agents: Agent[] = [];
  const stop = async () => {
    for (const a of agents) await a.close();
    for (const s of servers) await s.stop();
    await opened.close();
    await database.drop();
  };
  try {
    const key = await createKey({ db: opened.db, clock: systemClock }, names.org, names.project);
    for (const dir of dataDirs) {
      servers.push(await spawnServe(dir, { MEDIAD_DATABASE_URL: database.url, MEDIAD_SERVE_WORKERS: 'false', ...env }));
      agents.push(
        new Agent({
          connect: { ca: await fs.readFile(path.join(dir, 'tls', 'ca.crt'), 'utf8'), servername: 'localhost' },
        }),
      );
    }
    return { servers, agents, key, db: opened.db, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
