import { createRequire } from 'node:module';
import type pgModule from 'pg';

const require = createRequire(import.meta.url);
let loaded: typeof pgModule | null = null;

/**
 * The PostgreSQL driver, loaded at the first PostgreSQL connection rather than when this
 * folder is imported: the embedded default (SQLite) never needs it (bench/startup.ts). pg is
 * CommonJS, so it loads synchronously and `connect()` stays synchronous.
 */
export function pg(): typeof pgModule {
  return (loaded ??= require('pg'));
}
