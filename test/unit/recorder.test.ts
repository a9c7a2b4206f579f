import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { migrate, openDatabase, type Db } from '../../src/db/connect.js';
import type { Deps } from '../../src/deps.js';
import { newId } from '../../src/ids.js';
import type { AuthContext } from '../../src/services/access.js';
import { Recorder, type AnsweredRequest } from '../../src/services/operations/recorder.js';
import { findInSegment } from '../../src/db/request-log-segments.js';
import { storedRequests, storedSegments } from '../helpers/request-log.js';
import { memoryDeps } from '../helpers/memory-deps.js';
import { LATEST_VERSION } from '../../src/versions.js';

// The request log's writer against an in-memory database: what a request buffers is stored
// exactly once, in a segment per project and flush, also when requests are answered while a batch
// is being written; the order requests are read in is the order they were written in; paths read
// back as sent; retention by rows cuts at the exact request; request ids sort by time.
let db: Db;
let close: () => Promise<void>;
let deps: Deps;

before(async () => {
  ({ db, close, deps } = await memoryDeps({
    database: { dialect: 'sqlite', file: ':memory:' },
    requestLog: { enabled: true, days: 7, maxRows: 100_000 },
  }));
});
after(() => close());

const auth = (projectId: string): AuthContext => ({
  orgId: 'org_x',
  projectId,
  apiVersion: LATEST_VERSION,
  principal: { type: 'key', keyId: 'key_a', scopes: ['full'] },
});

const answered = (projectId: string, n: number): AnsweredRequest => ({
  id: newId('request'),
  auth: auth(projectId),
  method: 'GET',
  route: '/files',
  url: `/files?page=${n}&token=secret${n}`,
  status: 200,
  ms: 1.23456,
});

const stored = (projectId: string) => storedRequests(db, projectId);

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
    assert.equal(rows[0]!.route, '/files');
    assert.equal(rows[0]!.method, 'GET');
    assert.equal(rows[0]!.status, 200);
    assert.equal(rows[0]!.key_id, 'key_a');
    assert.equal(rows[0]!.user_id, null);
    assert.equal(rows[0]!.actor, 'key');
    assert.equal(rows[0]!.duration_ms, 1.235);
    assert.ok(Math.abs(Date.parse(rows[0]!.created) - Date.now()) < 10_000);
    const segments = await storedSegments(db, 'prj_one');
    assert.deepEqual(
      segments.map((s) => s.rows),
      [3, 2],
      'a segment per flush',
    );
    // The range of its ids (random after the millisecond, so not the first and last made).
    const ids = made.map((r) => r.id).sort();
    assert.equal(segments[0]!.first_id, ids[0]);
    assert.equal(segments[0]!.last_id, ids[2]);
    assert.equal(segments[0]!.n2xx, 3);
  });

  it('a flush of several projects writes a segment each; past 1024 requests a project gets another', async () => {
    const rec = new Recorder(deps);
    const made = Array.from({ length: 2100 }, (_, i) => answered(i % 3 === 0 ? 'prj_three' : 'prj_two', i));
    for (const r of made) rec.record(r);
    await rec.flush();
    for (const projectId of ['prj_two', 'prj_three'])
      assert.deepEqual(
        (await stored(projectId)).map((r) => r.id),
        made.filter((r) => r.auth.projectId === projectId).map((r) => r.id),
      );
    const counts = await db
      .selectFrom('request_log_segments')
      .select(['project_id', 'rows'])
      .where('project_id', 'in', ['prj_two', 'prj_three'])
      .orderBy('seq')
      .execute();
    assert.deepEqual(
      counts.map((c) => [c.project_id, c.rows]),
      [
        ['prj_three', 700],
        ['prj_two', 1024],
        ['prj_two', 376],
      ],
    );
  });

  it('a path holding tabs, newlines, backslashes or another request id reads back as it was', async () => {
    const rec = new Recorder(deps);
    const other = newId('request');
    // A backslash and a t (not a tab), a tab and a newline, an escaped tab, all three raw.
    const urls = [`/requests/${other}`, '/a\\tb', '/x\ty\nz', '/%09\\n', '/t\there\nand\\back'];
    const odd = urls.map((url, i) => ({ ...answered('prj_odd', i), url }));
    odd[4] = { ...odd[4]!, route: null, status: 599 };
    for (const r of odd) rec.record(r);
    await rec.flush();
    const rows = await stored('prj_odd');
    assert.deepEqual(
      rows.map((r) => r.path),
      odd.map((r) => r.url),
    );
    assert.equal(rows[4]!.route, null);
    const { body } = await db
      .selectFrom('request_log_segments')
      .select('body')
      .where('project_id', '=', 'prj_odd')
      .executeTakeFirstOrThrow();
    assert.equal(body.split('\n').length, 5, 'a line per request');
    for (const r of odd) assert.equal(findInSegment(body, r.id)?.path, r.url);
    assert.equal(findInSegment(body, other), undefined, 'an id inside a path is not a request');
  });

  it('on a SQLite file the writer thread writes and trims: older segments go, the one at the limit keeps its newest requests', async () => {
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
      const made = Array.from({ length: 300 }, (_, i) => answered('prj_trim', i));
      // Flushes of 70, each trimming (a twentieth of 200 added): the newest 200 are the last
      // segment's 20, two whole segments and 40 of the one before.
      for (let i = 0; i < made.length; i += 70) {
        for (const r of made.slice(i, i + 70)) rec.record(r);
        await rec.flush();
      }
      await rec.stop(); // and ends the thread
      const rows = await storedRequests(opened.db, 'prj_trim');
      assert.deepEqual(
        rows.map((r) => r.id),
        made.slice(100).map((r) => r.id),
        'the newest 200, in order',
      );
      assert.equal(rows[0]!.path, '/files?page=100&token=REDACTED');
      const segments = await storedSegments(opened.db, 'prj_trim');
      assert.deepEqual(
        segments.map((s) => s.rows),
        [40, 70, 70, 20],
      );
      const kept = made
        .slice(100, 140)
        .map((r) => r.id)
        .sort();
      assert.equal(segments[0]!.first_id, kept[0], 'the cut segment says what it holds');
      assert.equal(segments[0]!.last_id, kept[39]);
      assert.equal(segments[0]!.n2xx, 40);
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
