import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { TestServer } from './server.js';
import { MEDIAD } from './paths.js';

/** Starts `mediad worker` as its own process on the test server's data dir and database. */
export function spawnWorker(t: TestServer, env: Record<string, string> = {}): ChildProcess {
  const config = t.server.runtime.deps.config;
  const child = spawn(process.execPath, [...MEDIAD, 'worker'], {
    env: {
      ...process.env,
      MEDIAD_DATA_DIR: config.dataDir,
      MEDIAD_PUBLIC_URL: config.publicUrl,
      MEDIAD_LOG_LEVEL: process.env.MEDIAD_TEST_WORKER_LOG ? 'debug' : 'silent',
      MEDIAD_WORKER_POLL_MS: '50',
      MEDIAD_RATE_LIMIT_PER_MINUTE: '0',
      MEDIAD_WORKER_LEASE_SECONDS: '2',
      MEDIAD_ALLOWED_URL_HOSTS: config.fetch.allowHosts.join(','),
      ...(config.database.dialect === 'postgres' ? { MEDIAD_DATABASE_URL: config.database.url } : {}),
      ...env,
    },
    stdio: ['ignore', process.env.MEDIAD_TEST_WORKER_LOG ? 'pipe' : 'ignore', 'inherit'],
  });
  // MEDIAD_TEST_WORKER_LOG=<file> keeps the workers' logs for debugging.
  if (process.env.MEDIAD_TEST_WORKER_LOG)
    child.stdout?.pipe(fs.createWriteStream(process.env.MEDIAD_TEST_WORKER_LOG, { flags: 'a' }));
  return child;
}

export async function stopWorker(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}
