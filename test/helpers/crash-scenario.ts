import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { migrate, openDatabase, type Db } from '../../src/db/connect.js';
import { systemClock } from '../../src/deps.js';
import type { CrashPoint } from '../../src/faults.js';
import { createKey } from '../../src/services/people/keys.js';
import { spawnServe, type ServeProcess } from './serve-process.js';

// The crash tests' scenario: one data directory with a key, `mediad serve` processes started on it,
// some of them told to kill themselves at a step boundary (MEDIAD_CRASH_AT, src/faults.ts).

/** Runs `fn` on the data directory's SQLite database, migrated. */
export async function withDataDirDb<T>(dataDir: string, fn: (db: Db) => Promise<T>): Promise<T> {
  const database = openDatabase({ dialect: 'sqlite', file: path.join(dataDir, 'mediad.db') });
  try {
    await migrate(database.db);
    return await fn(database.db);
  } finally {
    await database.close();
  }
}

export class CrashScenario {
  key = '';
  /** Every server started, stopped in remove() whatever failed (a live child would hold the test run). */
  private readonly servers: ServeProcess[] = [];
  protected constructor(
    readonly dataDir: string,
    /** The environment of every server (beside the data directory and the crash point). */
    private readonly env: () => Record<string, string>,
  ) {}

  /** A new data directory (named after `prefix`) with a key. */
  static async start(prefix: string, env: () => Record<string, string>): Promise<CrashScenario> {
    return CrashScenario.init(new CrashScenario(await fs.mkdtemp(path.join(os.tmpdir(), prefix)), env));
  }

  protected static async init<S extends CrashScenario>(s: S): Promise<S> {
    s.key = (await withDataDirDb(s.dataDir, (db) => createKey({ db, clock: systemClock }, 'crash', 'main'))).key;
    return s;
  }

  async serve(crashAt?: CrashPoint): Promise<ServeProcess> {
    const s = await spawnServe(this.dataDir, { ...this.env(), ...(crashAt ? { MEDIAD_CRASH_AT: crashAt } : {}) });
    this.servers.push(s);
    return s;
  }

  /** Runs `act` on a server that dies at `point`; asserts it died by SIGKILL there. */
  async crash(point: CrashPoint, act: (s: ServeProcess) => Promise<unknown>, timeoutMs = 30_000): Promise<void> {
    const s = await this.serve(point);
    await act(s).catch(() => undefined); // the connection drops with the process
    assert.equal(
      // unref: a pending timer would hold the test process open until it fires.
      await Promise.race([s.exited, new Promise((r) => setTimeout(() => r('alive'), timeoutMs).unref())]),
      'SIGKILL',
      `the server died at ${point}`,
    );
    await s.stop();
  }

  async remove(): Promise<void> {
    for (const s of this.servers) await s.stop();
    await fs.rm(this.dataDir, { recursive: true, force: true });
  }
}
