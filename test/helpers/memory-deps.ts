import { pino } from 'pino';
import { migrate, openDatabase } from '../../src/db/connect.js';
import type { Deps } from '../../src/deps.js';

/**
 * For a unit test of one service or loop: an in-memory SQLite database, migrated, and the part of
 * Deps that such code reads (a real clock, a silent log, the config fields given). The rest of Deps
 * is left out on purpose, so the cast of these tests is made here, once.
 */
export async function memoryDeps(config: Record<string, unknown> = {}) {
  const { db, close } = openDatabase({ dialect: 'sqlite', file: ':memory:' });
  await migrate(db);
  const deps = { db, clock: { now: () => new Date() }, log: pino({ level: 'silent' }), config } as unknown as Deps;
  return { db, close, deps };
}
