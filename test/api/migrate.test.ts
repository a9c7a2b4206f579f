import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import pg from 'pg';
import SQLite from 'better-sqlite3';
import { MEDIAD } from '../helpers/paths.js';

const run = promisify(execFile);
const CLI = [...MEDIAD, 'migrate'];
const PG_ADMIN = process.env.MEDIAD_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function tenAtOnce(env: Record<string, string>): Promise<void> {
  const results = await Promise.allSettled(
    Array.from({ length: 10 }, () => run(process.execPath, CLI, { env: { ...process.env, ...env } })),
  );
  for (const r of results)
    assert.equal(
      r.status,
      'fulfilled',
      r.status === 'rejected' ? String((r.reason as { stderr?: string }).stderr) : '',
    );
}

describe('migrations under concurrent starts', () => {
  it('ten processes migrating one SQLite file apply each migration once', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-migrate-'));
    try {
      await tenAtOnce({ MEDIAD_DATA_DIR: dataDir });
      const db = new SQLite(path.join(dataDir, 'mediad.db'), { readonly: true });
      const names = db.prepare('select name from kysely_migration order by name').all() as { name: string }[];
      db.close();
      assert.ok(names.length >= 3);
      assert.equal(new Set(names.map((n) => n.name)).size, names.length);
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  it('ten processes migrating one PostgreSQL database apply each migration once', async (t) => {
    const admin = new pg.Client({ connectionString: PG_ADMIN });
    try {
      await admin.connect();
    } catch {
      t.skip('PostgreSQL is not reachable on 127.0.0.1:5432');
      return;
    }
    const name = `mediad_migrate_${process.pid}`;
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      const url = new URL(PG_ADMIN);
      url.pathname = `/${name}`;
      await tenAtOnce({ MEDIAD_DATA_DIR: os.tmpdir(), MEDIAD_DATABASE_URL: url.toString() });
      const c = new pg.Client({ connectionString: url.toString() });
      await c.connect();
      const { rows } = await c.query('select name from kysely_migration order by name');
      await c.end();
      assert.ok(rows.length >= 3);
      assert.equal(new Set(rows.map((r) => r.name)).size, rows.length);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});
