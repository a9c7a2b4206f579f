import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { migrate, openDatabase } from '../../src/db/connect.js';
import type { Database } from '../../src/db/schema.js';
import type { Deps } from '../../src/deps.js';

/**
 * For a unit test of one service or loop: an in-memory SQLite database, migrated, and the part of
 * Deps that such code reads (a real clock, a silent log, the config fields given). The rest of Deps
 * is left out on purpose, so the cast of these tests is made here, once.
 */
export async function memoryDeps(config: Record<string, unknown> = {}) {
  const { db, close } = openDatabase({ dialect: 'sqlite', file: ':memory:' });
  await migrate(db);
  return { db, close, deps: depsWith(db, config) };
}

/** Those Deps on a database the test opened itself (one that logs its statements, say). */
export function depsWith(db: Kysely<Database>, config: Record<string, unknown> = {}): Deps {
  return { db, clock: { now: () => new Date() }, log: pino({ level: 'silent' }), config } as unknown as Deps;
}
