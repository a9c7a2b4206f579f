import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { migrate, openDatabase, type Db } from '../../src/db/connect.js';
import type { Deps } from '../../src/deps.js';
import { newId } from '../../src/ids.js';
import type { AuthContext } from '../../src/services/access.js';
import { Recorder } from '../../src/services/recorder.js';
import { LATEST_VERSION } from '../../src/versions.js';

// The request log's writer against an in-memory database: what a request buffers becomes exactly
// one row, also when requests are answered while a batch is being written; the order rows are
// listed in is the order they were written in; request ids sort by time.
let db: Db;
let close: () => Promise<void>;
let deps: Deps;

before(async () => {
  ({ db, close } = openDatabase({ dialect: 'sqlite', file: ':memory:' }));
  await migrate(db);
  deps = {
    db,
    clock: { now: () => new Date() },
    log: pino({ level: 'silent' }),
    config: {
      database: { dialect: 'sqlite', file: ':memory:' },
      requestLog: { enabled: true, days: 7, maxRows: 1000 },
    },
  } as unknown as Deps;
});
after(() => close());

const auth = (projectId: string): AuthContext => ({
  orgId: 'org_x',
  projectId,
  apiVersion: LATEST_VERSION,
  principal: { type: 'key', keyId: 'key_a', scopes: ['full'] },
});

const answered = (projectId: string, n: number) => ({
  id: newId('request'),
  auth: auth(projectId),
  method: 'GET',
  route: '/files',
  url: `/files?page=${n}&token=secret${n}`,
  status: 200,
  ms: 1.23456,
});

const stored = (projectId: string) =>
  db.selectFrom('request_log').selectAll().where('project_id', '=', projectId).orderBy('seq').execute();

describe('Recorder', () => {
  it('writes each buffered request once, in order, also those answered during a write', async () => {
    const rec = new Recorder(deps);
    await rec.flush(); // an idle pass first: the buffers must not end up shared
    const made = [1, 2, 3].map((n) => answered('prj_one', n));
    for (const r of made) rec.record(r);
    const writing = rec.flush();
    // Answered while the batch is written: they wait for the next pass, untouched.
    const during = [4, 5].map((n) => answered('prj_one', n));
    for (const r of during) rec.record(r);
    await writing;
    await rec.flush();
    await rec.flush();
    const rows = await stored('prj_one');
    assert.deepEqual(
      rows.map((r) => r.id),
      [...made, ...during].map((r) => r.id),
    );
    assert.equal(rows[0]!.path, '/files?page=1&token=REDACTED');
    assert.equal(rows[0]!.key_id, 'key_a');
    assert.equal(rows[0]!.user_id, null);
    assert.equal(rows[0]!.actor, 'key');
    assert.equal(rows[0]!.duration_ms, 1.235);
    assert.ok(Math.abs(Date.parse(rows[0]!.created) - Date.now()) < 10_000);
  });

  it('a flush larger than one statement goes in statements of decreasing sizes, every row once', async () => {
    const rec = new Recorder(deps);
    const made = Array.from({ length: 512 + 256 + 7 }, (_, i) => answered('prj_two', i));
    for (const r of made) rec.record(r);
    await rec.flush();
    const rows = await stored('prj_two');
    assert.deepEqual(
      rows.map((r) => r.id),
      made.map((r) => r.id),
    );
  });

  it('on a SQLite file the appender thread writes the rows, every row once and in order, and trims to the limit', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediad-recorder-'));
    const file = path.join(dir, 'mediad.db');
    const opened = openDatabase({ dialect: 'sqlite', file });
    try {
      await migrate(opened.db);
      const config = {
        ...deps.config,
        database: { dialect: 'sqlite', file },
        requestLog: { enabled: true, days: 7, maxRows: 200 },
      };
      const rec = new Recorder({ ...deps, db: opened.db, config } as Deps);
      const made = Array.from({ length: 300 }, (_, i) => answered('prj_file', i));
      for (const r of made.slice(0, 150)) rec.record(r);
      const writing = rec.flush();
      for (const r of made.slice(150)) rec.record(r);
      await writing;
      await rec.stop(); // writes the rest (and trims: 300 added, 10 make a trim due), then ends the thread
      const rows = await opened.db
        .selectFrom('request_log')
        .select(['id', 'path'])
        .where('project_id', '=', 'prj_file')
        .orderBy('seq')
        .execute();
      assert.deepEqual(
        rows.map((r) => r.id),
        made.slice(100).map((r) => r.id),
        'the newest 200, in order',
      );
      assert.equal(rows[0]!.path, '/files?page=100&token=REDACTED');
    } finally {
      await opened.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('request ids sort in the order they were made', async () => {
    const a = newId('request');
    await new Promise((r) => setTimeout(r, 3));
    const b = newId('request');
    assert.match(a, /^req_[A-Za-z0-9]{20}$/);
    assert.ok(a < b, `${a} < ${b}`);
  });
});
