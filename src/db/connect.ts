import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { pg } from './pg-module.js';
import {
  CompiledQuery,
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteAdapter,
  SqliteDialect,
  sql,
  type DialectAdapter,
  type DatabaseConnection,
  type Driver,
  type Migration,
  type MigrationProvider,
  type QueryCompiler,
  type SqliteDatabase,
  type SqliteStatement,
} from 'kysely';
import type { Config } from '../config.js';
import type { Database } from './schema.js';
import { GENERIC_PLANS, NO_JIT, NO_JIT_SET, withNamedStatements } from './prepared.js';
import { ReaderThread } from './reader.js';
import { SqliteLiteralLimitCompiler } from './sqlite-compiler.js';
import { statementRowBuilder } from './rows.js';
import * as m001 from './migrations/001-core.js';
import * as m002 from './migrations/002-tasks.js';
import * as m003 from './migrations/003-automations.js';
import * as m004 from './migrations/004-rate-limits.js';
import * as m005 from './migrations/005-hardening.js';
import * as m006 from './migrations/006-api-versions.js';
import * as m007 from './migrations/007-accounts.js';
import * as m008 from './migrations/008-request-log.js';
import * as m009 from './migrations/009-admin.js';
import * as m010 from './migrations/010-operations.js';
import * as m011 from './migrations/011-request-log-segments.js';
import * as m012 from './migrations/012-data-passes.js';
import * as m013 from './migrations/013-chain-budgets.js';
import * as m014 from './migrations/014-image-urls.js';
// Resumable uploads (issue 25).
import * as m015 from './migrations/015-uploads.js';
// Playable early (issue 23).
import * as m016 from './migrations/016-task-playable.js';
// Image-URL cache budgets per project (issue 24).
import * as m017 from './migrations/017-image-cache-budgets.js';
import * as m018 from './migrations/018-task-claim-order.js';
import * as m019 from './migrations/019-task-partial-indexes.js';
import * as m020 from './migrations/020-task-optional-indexes.js';
import * as m021 from './migrations/021-events-undispatched-partial.js';

export type Db = Kysely<Database>;

// Migrations are listed in code (not read from a folder) so the built package and
// tsx runs see exactly the same set.
const MIGRATIONS: Record<string, Migration> = {
  '001-core': m001,
  '002-tasks': m002,
  '003-automations': m003,
  '004-rate-limits': m004,
  '005-hardening': m005,
  '006-api-versions': m006,
  '007-accounts': m007,
  '008-request-log': m008,
  '009-admin': m009,
  '010-operations': m010,
  '011-request-log-segments': m011,
  '012-data-passes': m012,
  '013-chain-budgets': m013,
  '014-image-urls': m014,
  // Resumable uploads (issue 25).
  '015-uploads': m015,
  // Playable early (issue 23).
  '016-task-playable': m016,
  // Image-URL cache budgets per project (issue 24).
  '017-image-cache-budgets': m017,
  '018-task-claim-order': m018,
  '019-task-partial-indexes': m019,
  '020-task-optional-indexes': m020,
  '021-events-undispatched-partial': m021,
};

class CodeMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

/**
 * Kysely's SQLite adapter takes no migration lock (it assumes one process). Several mediad
 * processes share one file, so migrating holds SQLite's write lock from start to end: the
 * others wait for it, then find nothing left to apply.
 */
class LockingSqliteAdapter extends SqliteAdapter {
  override async acquireMigrationLock(db: Kysely<unknown>): Promise<void> {
    await sql`begin immediate`.execute(db);
  }

  override async releaseMigrationLock(db: Kysely<unknown>): Promise<void> {
    await sql`commit`.execute(db);
  }
}

/**
 * SQLite transactions start with BEGIN IMMEDIATE. A plain (deferred) BEGIN reads first and
 * upgrades to a writer later; in WAL mode that upgrade fails at once with "database is
 * locked" when another process (a mediad worker) committed in between, and no busy timeout
 * helps. Taking the write lock up front makes concurrent writers wait their turn instead.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  override createAdapter(): DialectAdapter {
    return new LockingSqliteAdapter();
  }

  override createQueryCompiler(): QueryCompiler {
    return new SqliteLiteralLimitCompiler();
  }

  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection: DatabaseConnection) => {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    };
    return driver;
  }
}

const STATEMENT_CACHE_SIZE = 500;

/** A statement as Kysely's SQLite driver uses it, reading rows as arrays when it returns rows. */
function fastRows(stmt: SQLite.Statement): SqliteStatement {
  if (!stmt.reader) return stmt as unknown as SqliteStatement;
  const toObject = statementRowBuilder(() => stmt.columns().map((c) => c.name));
  const rows = stmt.raw(true);
  return {
    reader: true,
    all: (parameters) => (rows.all(parameters) as unknown[][]).map(toObject),
    run: (parameters) => rows.run(parameters),
    *iterate(parameters) {
      for (const values of rows.iterate(parameters) as IterableIterator<unknown[]>) yield toObject(values);
    },
  };
}

/**
 * Kysely prepares every query anew; preparing is a fifth of a simple request's CPU. The
 * SQL text of a query is the same on every call (values are parameters), so prepared
 * statements are kept and reused. better-sqlite3 runs each statement to completion
 * synchronously, so sharing one between callers is safe.
 */
function withStatementCache(db: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => void db.close(),
    prepare(sql: string) {
      let stmt = cache.get(sql);
      if (!stmt) {
        stmt = fastRows(db.prepare(sql));
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
        cache.set(sql, stmt);
      }
      return stmt;
    },
  };
}

/** A database: Kysely for every query, and for a SQLite file the reader thread of its hot reads (db/hot-reads.ts). */
export interface OpenDatabase {
  db: Db;
  reader: ReaderThread | null;
  /** Closes the reader thread, then the connections. */
  close(): Promise<void>;
}

/** The SQLite file a database lives in; null for PostgreSQL and an in-memory database (one connection only). */
export function sqliteFile(database: Config['database']): string | null {
  return database.dialect === 'sqlite' && database.file !== ':memory:' ? database.file : null;
}

export function openDatabase(database: Config['database']): OpenDatabase {
  const db = connect(database);
  // An in-memory database exists only on this connection, and PostgreSQL needs no help: no reader thread.
  const file = sqliteFile(database);
  const reader = file ? new ReaderThread(file) : null;
  return {
    db,
    reader,
    async close() {
      await reader?.close();
      await db.destroy();
    },
  };
}

/** Kysely on one connection (SQLite) or a pool (PostgreSQL); the request log's writer thread opens its own. */
export function connect(database: Config['database']): Db {
  if (database.dialect === 'postgres') {
    // bigint (int8) columns come back as numbers; file sizes stay far below 2^53.
    const { types, Pool } = pg();
    types.setTypeParser(20, (v) => Number(v));
    const pool = new Pool({ connectionString: database.url, max: database.poolSize });
    // Set once per connection, before its first query (a client runs its queries in order); not
    // as a startup option like the claim's connection, which a pooler may refuse: there the
    // claim falls back to this pool, and this pool has no fallback.
    pool.on('connect', (client) => void client.query(NO_JIT_SET).catch(() => undefined));
    // The task claim's connection (db/prepared.ts): opened at the first claim, so a process that
    // claims nothing (serve without workers, the CLI) never opens it.
    const genericPool = new Pool({ connectionString: database.url, max: 1, options: `${GENERIC_PLANS} ${NO_JIT}` });
    // An idle connection closed by the server (a restart, a failover) is dropped and replaced by
    // the pool; without a listener its 'error' event would crash the process. Queries in flight
    // still fail and report their own errors.
    pool.on('error', () => undefined);
    genericPool.on('error', () => undefined);
    return new Kysely<Database>({ dialect: new PostgresDialect({ pool: withNamedStatements(pool, genericPool) }) });
  }
  if (database.file !== ':memory:') fs.mkdirSync(path.dirname(database.file), { recursive: true });
  const sqlite = new SQLite(database.file);
  // WAL lets readers run beside the writer and other processes (mediad worker) share the file.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 10000');
  return new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite) }) });
}

/**
 * Applies pending migrations, up to `to` (a migration's name) if given, so a test of a migration
 * can stop before it; returns the names applied.
 */
export async function migrate(db: Db, to?: string): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new CodeMigrationProvider() });
  const { error, results } = await (to === undefined ? migrator.migrateToLatest() : migrator.migrateTo(to));
  if (error)
    throw new Error(`database migration failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Migrations not applied yet, by name (mediad doctor; nothing is applied). */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new CodeMigrationProvider() });
  return (await migrator.getMigrations()).filter((m) => m.executedAt === undefined).map((m) => m.name);
}
