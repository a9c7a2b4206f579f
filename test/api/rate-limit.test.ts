import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import { freePort, startTestServer, type ApiResponse, type TestServer } from '../helpers/server.js';

const REDIS_URL = process.env.MEDIAD_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
const PG_ADMIN_URL = process.env.MEDIAD_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function reachable(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect({ host: u.hostname, port: Number(u.port) }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
    s.setTimeout(1000, () => {
      s.destroy();
      resolve(false);
    });
  });
}
const redisUp = await reachable(REDIS_URL);
const pgUp = await reachable(PG_ADMIN_URL);

const servers: TestServer[] = [];
async function start(env: Record<string, string>): Promise<TestServer> {
  const t = await startTestServer(env);
  servers.push(t);
  return t;
}
after(async () => {
  // Later servers may share the first one's database: stop them first.
  for (const t of servers.reverse()) await t.stop();
});

/** Makes `to` accept `from`'s key under the same key id: two processes, one API key. */
async function shareKey(from: TestServer, to: TestServer, keyId: string): Promise<void> {
  const src = from.server.runtime.deps.db;
  const key = await src.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirstOrThrow();
  const project = await src
    .selectFrom('projects')
    .selectAll()
    .where('id', '=', key.project_id)
    .executeTakeFirstOrThrow();
  const org = await src.selectFrom('orgs').selectAll().where('id', '=', project.org_id).executeTakeFirstOrThrow();
  const dst = to.server.runtime.deps.db;
  await dst.insertInto('orgs').values(org).execute();
  await dst.insertInto('projects').values(project).execute();
  await dst.insertInto('api_keys').values(key).execute();
}

function assertLimited(res: ApiResponse, limit: number): void {
  assert.equal(res.status, 429, res.text);
  assert.equal(res.json.error.code, 'rate_limited');
  assert.match(res.json.error.message, /retry in \d+ s/);
  const retry = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 120, `retry-after ${retry}`);
  assert.equal(res.headers['ratelimit-limit'], String(limit));
  assert.equal(res.headers['ratelimit-remaining'], '0');
  assert.equal(res.headers['ratelimit-reset'], String(retry));
}

/** Alternates between servers; returns the statuses. */
async function burst(ts: TestServer[], key: string, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push((await ts[i % ts.length]!.call('GET', '/files', { key })).status);
  return statuses;
}

describe('rate limit in one process (SQLite: memory)', () => {
  it('answers the 6th request of a minute with 429, Retry-After and RateLimit headers; other keys are unaffected', async () => {
    const t = await start({ MEDIAD_RATE_LIMIT_PER_MINUTE: '5' });
    const { key } = await t.key('rl', 'one');
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.call('GET', '/files', { key });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['ratelimit-limit'], '5');
      const reset = Number(res.headers['ratelimit-reset']);
      assert.ok(reset >= 1 && reset <= 60, `reset ${reset}`);
      remaining.push(res.headers['ratelimit-remaining']!);
    }
    // A window rollover during the burst may leave a fraction of the count behind.
    assert.equal(remaining.at(-1), '0');
    assertLimited(await t.call('GET', '/files', { key }), 5);
    // Error answers of the authenticated scope carry the headers too.
    assertLimited(await t.call('GET', '/files/file_doesnotexist', { key }), 5);

    const other = (await t.key('rl', 'two')).key;
    const res = await t.call('GET', '/files', { key: other });
    assert.equal(res.status, 200);
    assert.equal(res.headers['ratelimit-remaining'], '4');
    // Unauthenticated requests are not counted against anyone (and get no headers).
    const anon = await t.call('GET', '/files');
    assert.equal(anon.status, 401);
    assert.equal(anon.headers['ratelimit-limit'], undefined);
    // Routes outside the API-key scope are not limited.
    assert.equal((await t.call('GET', '/health')).headers['ratelimit-limit'], undefined);
  });

  it('counts a key once across the API and its tus uploads', async () => {
    const t = await start({ MEDIAD_RATE_LIMIT_PER_MINUTE: '5' });
    const { key } = await t.key('rl', 'tus');
    const remaining = async (method: string, path: string, headers?: Record<string, string>) => {
      const res = await t.call(method, path, { key, ...(headers ? { headers } : {}) });
      assert.equal(res.headers['ratelimit-limit'], '5', `${method} ${path}: ${res.status} ${res.text}`);
      return Number(res.headers['ratelimit-remaining']);
    };
    // Separate counts would answer the tus request with the first request's remaining count again.
    const first = await remaining('GET', '/files');
    const tus = await remaining('HEAD', '/uploads/tus/upl_doesnotexist', { 'tus-resumable': '1.0.0' });
    const next = await remaining('GET', '/files');
    assert.deepEqual([first - tus, tus - next], [1, 1], `GET ${first}, tus ${tus}, GET ${next}: one count`);
  });

  it('sends no headers and never refuses when the limit is 0', async () => {
    const t = await start({ MEDIAD_RATE_LIMIT_PER_MINUTE: '0' });
    const { key } = await t.key();
    const statuses = await burst([t], key, 8);
    assert.deepEqual(statuses, Array(8).fill(200));
    assert.equal((await t.call('GET', '/files', { key })).headers['ratelimit-limit'], undefined);
  });
});

describe('rate limit across processes', () => {
  it(
    'Redis: two servers together allow only the limit',
    { skip: !redisUp && `Redis not reachable at ${REDIS_URL}` },
    async () => {
      const a = await start({ MEDIAD_RATE_LIMIT_PER_MINUTE: '5', MEDIAD_REDIS_URL: REDIS_URL });
      const b = await start({ MEDIAD_RATE_LIMIT_PER_MINUTE: '5', MEDIAD_REDIS_URL: REDIS_URL });
      const k = await a.key('rl', 'redis');
      await shareKey(a, b, k.key_id);
      assert.deepEqual(await burst([a, b], k.key, 5), [200, 200, 200, 200, 200]);
      assertLimited(await b.call('GET', '/files', { key: k.key }), 5);
      assertLimited(await a.call('GET', '/files', { key: k.key }), 5);
    },
  );

  it('Redis down: requests fail open, without RateLimit headers', async () => {
    const t = await start({
      MEDIAD_RATE_LIMIT_PER_MINUTE: '2',
      MEDIAD_REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
    });
    const { key } = await t.key();
    const res = await t.call('GET', '/files', { key });
    assert.equal(res.status, 200);
    assert.equal(res.headers['ratelimit-limit'], undefined);
    assert.deepEqual(await burst([t], key, 4), [200, 200, 200, 200]);
  });

  it(
    'PostgreSQL without Redis: two servers on one database together allow only the limit',
    { skip: !pgUp && `PostgreSQL not reachable at ${PG_ADMIN_URL}` },
    async () => {
      const saved = process.env.MEDIAD_TEST_DATABASE_URL;
      try {
        process.env.MEDIAD_TEST_DATABASE_URL = PG_ADMIN_URL; // a fresh database for the first server
        const a = await start({ MEDIAD_RATE_LIMIT_PER_MINUTE: '5' });
        const database = a.server.runtime.deps.config.database;
        assert.equal(database.dialect, 'postgres');
        delete process.env.MEDIAD_TEST_DATABASE_URL; // the second one opens the same database
        const b = await start({
          MEDIAD_RATE_LIMIT_PER_MINUTE: '5',
          MEDIAD_DATABASE_URL: database.dialect === 'postgres' ? database.url : '',
        });
        const k = await a.key('rl', 'pg');
        assert.deepEqual(await burst([a, b], k.key, 5), [200, 200, 200, 200, 200]);
        assertLimited(await b.call('GET', '/files', { key: k.key }), 5);
        assertLimited(await a.call('GET', '/files', { key: k.key }), 5);
        const rows = await a.server.runtime.deps.db
          .selectFrom('rate_limits' as never)
          .selectAll()
          .execute();
        assert.ok(rows.length >= 1 && rows.length <= 2, `rows ${rows.length}`);
      } finally {
        if (saved === undefined) delete process.env.MEDIAD_TEST_DATABASE_URL;
        else process.env.MEDIAD_TEST_DATABASE_URL = saved;
      }
    },
  );
});
