import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { fixture } from '../helpers/fixtures.js';
import { SegmentBuilder } from '../../src/db/request-log-segments.js';
import { logged, storedRequests, writeRequests } from '../helpers/request-log.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// The request log: every API request that reached a project (key, session, signed upload) is
// recorded in batches off the request path, with its status, time and who made it, and never a
// secret; filters; another project's requests are absent; retention by age and by row count.

const PASSWORD = 'correct horse battery staple';

/** Polls `fn` until it returns a value (not undefined), for the batched writes. */
async function eventually<T>(fn: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('request log', () => {
  let t: TestServer;
  let owner: { cookie: string; csrf: string; userId: string; email: string };
  let projectId: string;
  let fullKey: string;
  let ci: { key: string; id: string };

  const list = (query: string, key = fullKey) => t.call('GET', `/requests${query}`, { key });

  before(async () => {
    t = await startTestServer();
    const token = new URLSearchParams(new URL(t.server.setupUrl!).hash.slice(1)).get('token')!;
    const res = await t.call('POST', '/auth/setup', {
      body: { token, email: 'ada@example.com', name: 'Ada', password: PASSWORD, org: 'Acme', project: 'Web' },
    });
    assert.equal(res.status, 201, res.text);
    const d = res.json.data;
    owner = {
      cookie: res.headers['set-cookie']!.split(';')[0]!,
      csrf: d.csrf_token,
      userId: d.user.id,
      email: d.user.email,
    };
    projectId = d.project.id;
    fullKey = d.key.key;
    const made = await t.call('POST', '/keys', { key: fullKey, body: { name: 'ci' } });
    assert.equal(made.status, 201, made.text);
    ci = { key: made.json.data.key, id: made.json.data.id };
  });
  after(() => t.stop());

  it('records status, route, time and the key by name; GET /requests/{id} is the request id', async () => {
    const ok = await t.call('GET', '/files?limit=3', { key: ci.key });
    assert.equal(ok.status, 200);
    const missing = await t.call('GET', '/files/file_doesnotexist000', { key: ci.key });
    assert.equal(missing.status, 404);
    const bad = await t.call('GET', '/files?limit=1000', { key: ci.key });
    assert.equal(bad.status, 400);

    const rows = await eventually(async () => {
      const res = await list(`?key_id=${ci.id}`);
      assert.equal(res.status, 200, res.text);
      return res.json.data.length >= 3 ? res.json.data : undefined;
    }, 'the ci key’s requests');
    const byId = new Map(rows.map((r: any) => [r.id, r]));
    const okRow: any = byId.get(ok.headers['x-request-id']!);
    assert.ok(okRow, 'the row id is the request id');
    assert.equal(okRow.object, 'request');
    assert.equal(okRow.method, 'GET');
    assert.equal(okRow.path, '/files?limit=3');
    assert.equal(okRow.url, `${t.base}/files?limit=3`);
    assert.equal(okRow.route, '/files');
    assert.equal(okRow.status, 200);
    assert.equal(okRow.actor, 'key');
    assert.deepEqual(okRow.key, { id: ci.id, name: 'ci' });
    assert.equal(okRow.user, undefined);
    assert.ok(okRow.duration_ms >= 0 && okRow.duration_ms < 10_000);
    assert.equal((byId.get(missing.headers['x-request-id']!) as any).status, 404);
    assert.equal((byId.get(missing.headers['x-request-id']!) as any).route, '/files/:id');
    assert.equal((byId.get(bad.headers['x-request-id']!) as any).status, 400);
    // Newest first.
    const times = rows.map((r: any) => r.created);
    assert.deepEqual(times, [...times].sort().reverse());

    const one = await t.call('GET', `/requests/${missing.headers['x-request-id']}`, { key: fullKey });
    assert.equal(one.status, 200, one.text);
    assert.equal(one.json.data.status, 404);
    assert.equal(one.json.data.key.name, 'ci');
    assert.equal((await t.call('GET', '/requests/req_nosuchrequest00000000', { key: fullKey })).status, 404);
  });

  it('filters: status class, method, key, user, created range', async () => {
    const before = new Date().toISOString();
    // Rows are stamped to the millisecond: the POST must start in a later one than `before`.
    await new Promise((r) => setTimeout(r, 5));
    const post = await t.call('POST', '/media', { key: ci.key, body: { title: 'x' } });
    assert.equal(post.status, 201);
    const id = post.headers['x-request-id'];
    await eventually(async () => {
      const r = await list(`?key_id=${ci.id}&method=POST`);
      return r.json.data.some((x: any) => x.id === id) ? true : undefined;
    }, 'the POST');
    const fours = await list('?status_class=4xx&limit=100');
    assert.ok(fours.json.data.length >= 2);
    assert.ok(fours.json.data.every((r: any) => r.status >= 400 && r.status < 500));
    const twos = await list('?status_class=2xx&limit=100');
    assert.ok(twos.json.data.every((r: any) => r.status >= 200 && r.status < 300));
    const posts = await list(`?method=POST&key_id=${ci.id}`);
    assert.deepEqual(
      posts.json.data.map((r: any) => r.id),
      [id],
    );
    const since = await list(`?created_after=${encodeURIComponent(before)}&key_id=${ci.id}`);
    assert.deepEqual(
      since.json.data.map((r: any) => r.id),
      [id],
    );
    const until = await list(`?created_before=${encodeURIComponent(before)}&key_id=${ci.id}`);
    assert.ok(until.json.data.length >= 3 && !until.json.data.some((r: any) => r.id === id));
    assert.equal((await list(`?user_id=${owner.userId}`)).json.meta.total, 0, 'no session request yet');
    const badClass = await list('?status_class=6xx');
    assert.equal(badClass.status, 400);
    assert.equal(badClass.json.error.code, 'validation_failed');
    assert.equal((await list('?created_after=yesterday')).status, 400);
  });

  it('a session’s requests carry the user and email', async () => {
    const res = await t.call('GET', '/media', {
      headers: { cookie: owner.cookie, 'x-mediad-project': projectId },
    });
    assert.equal(res.status, 200, res.text);
    const rows = await eventually(async () => {
      const r = await list(`?user_id=${owner.userId}`);
      // data, not meta.total: on PostgreSQL the count and the page are two reads, and a batch may land between them.
      return r.json.data.length > 0 ? r.json.data : undefined;
    }, 'the session request');
    assert.equal(rows[0].id, res.headers['x-request-id']);
    assert.equal(rows[0].actor, 'session');
    assert.deepEqual(rows[0].user, { id: owner.userId, email: owner.email });
    assert.equal(rows[0].key, undefined);
    // The web application reads the log with its session too.
    const viaSession = await t.call('GET', '/requests?limit=1', {
      headers: { cookie: owner.cookie, 'x-mediad-project': projectId },
    });
    assert.equal(viaSession.status, 200);
  });

  it('no secret is stored: signatures, tokens, keys, Authorization and cookies', async () => {
    const sig = await t.call('POST', '/signatures', {
      key: fullKey,
      body: { folder: 'up', filename: 'a.png', method: 'put' },
    });
    assert.equal(sig.status, 201, sig.text);
    const signedUrl: string = sig.json.data.url;
    const signature = new URL(signedUrl).searchParams.get('signature')!;
    const bytes = await fs.readFile(await fixture('image-png'));
    const put = await t.call('PUT', signedUrl, { raw: bytes });
    assert.equal(put.status, 201, put.text);
    const q = await t.call(
      'GET',
      `/files?limit=2&token=tok_secret_1&api_key=${encodeURIComponent(fullKey)}&x=${encodeURIComponent(ci.key)}`,
      { key: ci.key },
    );
    assert.equal(q.status, 200);

    const putRow = await eventually(async () => {
      const r = await t.call('GET', `/requests/${put.headers['x-request-id']}`, { key: fullKey });
      return r.status === 200 ? r.json.data : undefined;
    }, 'the signed upload');
    assert.equal(putRow.actor, 'signed_url');
    assert.equal(putRow.status, 201);
    assert.match(putRow.path, /signature=REDACTED/);
    assert.ok(putRow.path.includes('expiry='), 'what is not secret stays');
    const qRow = await eventually(async () => {
      const r = await t.call('GET', `/requests/${q.headers['x-request-id']}`, { key: fullKey });
      return r.status === 200 ? r.json.data : undefined;
    }, 'the query');
    assert.equal(qRow.path, '/files?limit=2&token=REDACTED&api_key=REDACTED&x=REDACTED');

    // Every stored segment, every column: none of the secrets this test used.
    const stored = JSON.stringify(
      await t.server.runtime.deps.db.selectFrom('request_log_segments').selectAll().execute(),
    );
    for (const secret of [
      signature,
      fullKey,
      ci.key,
      'tok_secret_1',
      owner.cookie.split('=')[1]!,
      owner.csrf,
      'Bearer',
    ])
      assert.ok(!stored.includes(secret), `the log holds no ${secret.slice(0, 8)}…`);
  });

  it('another project’s requests are absent, and its ids are 404', async () => {
    const other = await t.key('other-org', 'other');
    const mine = await list('?limit=1');
    const myId = mine.json.data[0].id;
    const theirs = await t.call('GET', '/requests', { key: other.key });
    assert.equal(theirs.status, 200);
    assert.ok(theirs.json.data.every((r: any) => r.key?.id === other.key_id));
    assert.equal((await t.call('GET', `/requests/${myId}`, { key: other.key })).status, 404);
  });

  it('reading the log is the project family’s read access', async () => {
    const files = await t.call('POST', '/keys', { key: fullKey, body: { scopes: ['files:write'] } });
    const res = await t.call('GET', '/requests', { key: files.json.data.key });
    assert.equal(res.status, 403);
    assert.equal(res.json.error.code, 'insufficient_scope');
    const reader = await t.call('POST', '/keys', { key: fullKey, body: { scopes: ['project:read'] } });
    assert.equal((await t.call('GET', '/requests', { key: reader.json.data.key })).status, 200);
  });
});

describe('request log retention and switch', () => {
  it('by age and by rows per project, whichever comes first', async () => {
    const t = await startTestServer({ MEDIAD_REQUEST_LOG_MAX_ROWS: '5', MEDIAD_REQUEST_LOG_DAYS: '1' });
    try {
      const { key, project_id } = await t.key('ret', 'main');
      const db = t.server.runtime.deps.db;
      const old = new Date(Date.now() - 2 * 86_400_000).toISOString();
      await writeRequests(db, project_id, [logged({ id: 'req_old0000000000000000001', created: old })]);
      const first = await t.call('GET', '/files', { key });
      // The old request goes when the project is next pruned; the new one stays (far under 5 rows).
      await eventually(async () => {
        const ids = (await storedRequests(db, project_id)).map((r) => r.id);
        return ids.includes(first.headers['x-request-id']!) && !ids.includes('req_old0000000000000000001')
          ? true
          : undefined;
      }, 'the request older than a day to go');

      const made: string[] = [];
      for (let i = 0; i < 12; i++)
        made.push((await t.call('GET', `/files?page=${i + 1}`, { key })).headers['x-request-id']!);
      const left = await eventually(async () => {
        // In the order they were written: total, unlike created (equal ms).
        const ids = (await storedRequests(db, project_id)).map((r) => r.id).reverse();
        return ids.length <= 5 && ids.includes(made[11]!) ? ids : undefined;
      }, 'the project to be cut to 5 requests');
      assert.ok(left.length >= 1 && left.length <= 5);
      assert.ok(!left.includes(made[0]!), 'the oldest went');
      assert.deepEqual(left, made.slice(12 - left.length).reverse(), 'the newest stayed');
    } finally {
      await t.stop();
    }
  });

  it('rows made in the same millisecond are listed newest written first, on every page', async () => {
    const t = await startTestServer();
    try {
      const { key, project_id } = await t.key('same-ms', 'main');
      const db = t.server.runtime.deps.db;
      // An hour ahead: no request this test makes (recorded as it goes) falls in the filtered range.
      const created = new Date(Date.now() + 3600_000).toISOString();
      // Ids in descending order, so neither id nor created gives the written order; three
      // segments of one request, then one of three.
      const ids = Array.from({ length: 6 }, (_, i) => `req_samems${String(9 - i).repeat(14)}`);
      await writeRequests(
        db,
        project_id,
        ids.slice(0, 3).map((id) => logged({ id, created })),
      );
      const b = new SegmentBuilder(project_id);
      for (const id of ids.slice(3)) b.addRequest(logged({ id, created }));
      await db.insertInto('request_log_segments').values(b.row()).execute();
      const seen: string[] = [];
      for (let page = 1; page <= 3; page++) {
        const res = await t.call(
          'GET',
          `/requests?limit=2&page=${page}&created_after=${encodeURIComponent(new Date(Date.parse(created) - 1).toISOString())}`,
          { key },
        );
        assert.equal(res.status, 200, res.text);
        seen.push(...res.json.data.filter((r: any) => r.id.startsWith('req_samems')).map((r: any) => r.id));
      }
      assert.deepEqual(seen, [...ids].reverse());
    } finally {
      await t.stop();
    }
  });

  it('MEDIAD_REQUEST_LOG=false records nothing', async () => {
    const t = await startTestServer({ MEDIAD_REQUEST_LOG: 'false' });
    try {
      const { key } = await t.key('off', 'main');
      for (let i = 0; i < 3; i++) assert.equal((await t.call('GET', '/files', { key })).status, 200);
      await new Promise((r) => setTimeout(r, 600)); // more than two flush periods
      const res = await t.call('GET', '/requests', { key });
      assert.equal(res.status, 200);
      assert.equal(res.json.meta.total, 0);
    } finally {
      await t.stop();
    }
  });
});
