import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startReceiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';

let t: TestServer;
let origin: Origin;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

before(async () => {
  origin = await startOrigin();
  receiver = await startReceiver();
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: `${origin.host},${receiver.host}` });
});
after(async () => {
  await t.stop();
  await receiver.close();
  await origin.close();
});

/** The sample value of the series `name{labels}` (labels in any order), or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...m[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1]!, x[2]!]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('GET /metrics', () => {
  it('reports requests by route pattern, task durations, queue depth and webhook outcomes', async () => {
    const { key } = await t.key('metrics', 'one');
    assert.equal((await t.call('GET', '/files', { key })).status, 200);
    assert.equal((await t.call('GET', '/files/file_doesnotexist1', { key })).status, 404);
    assert.equal((await t.call('GET', '/files/file_doesnotexist2', { key })).status, 404);
    assert.equal((await t.call('GET', '/no/such/path')).status, 404);
    const created = await t.call('POST', '/tasks', {
      key,
      body: { kind: 'ingest', url: origin.url('/fixtures/image-png'), webhook_url: receiver.url() },
    });
    assert.equal(created.status, 201, created.text);
    const task = await waitForTask(t, key, created.json.data.id);
    assert.equal(task.status, 'completed');
    await receiver.waitFor(1);

    // The delivery row is updated (and counted) just after the receiver answers.
    let text = '';
    for (let i = 0; i < 100; i++) {
      const res = await t.call('GET', '/metrics');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
      text = res.text;
      if (sample(text, 'mediad_webhook_deliveries_total', { outcome: 'delivered' })) break;
      await new Promise((r) => setTimeout(r, 20));
    }

    assert.equal(sample(text, 'mediad_http_requests_total', { method: 'GET', route: '/files', status: '200' }), 1);
    assert.equal(sample(text, 'mediad_http_requests_total', { method: 'GET', route: '/files/:id', status: '404' }), 2);
    assert.equal(sample(text, 'mediad_http_requests_total', { method: 'POST', route: '/tasks', status: '201' }), 1);
    assert.equal(sample(text, 'mediad_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }), 1);
    assert.ok(!text.includes('doesnotexist') && !text.includes('/no/such/path'), 'raw URLs never become labels');
    assert.equal(
      sample(text, 'mediad_http_request_duration_seconds_count', { method: 'GET', route: '/files/:id', status: '404' }),
      2,
    );
    assert.ok(
      sample(text, 'mediad_http_request_duration_seconds_bucket', {
        method: 'GET',
        route: '/files',
        status: '200',
        le: '+Inf',
      }) === 1,
    );

    assert.equal(sample(text, 'mediad_tasks_total', { kind: 'ingest', status: 'completed' }), 1);
    assert.equal(sample(text, 'mediad_task_duration_seconds_count', { kind: 'ingest', status: 'completed' }), 1);
    const seconds = sample(text, 'mediad_task_duration_seconds_sum', { kind: 'ingest', status: 'completed' })!;
    assert.ok(seconds > 0 && seconds < 60, `task took ${seconds} s`);

    for (const status of ['pending', 'processing', 'waiting'])
      assert.equal(sample(text, 'mediad_queue_depth', { status }), 0);
    assert.equal(sample(text, 'mediad_webhook_deliveries_total', { outcome: 'delivered' }), 1);
    assert.match(text, /^process_resident_memory_bytes \d+/m);
    assert.match(text, /^process_cpu_seconds_total [\d.e+-]+$/m);
    assert.doesNotMatch(text, /nodejs_eventloop|nodejs_gc/);
  });

  it('without a token, refuses clients behind a proxy', async () => {
    const res = await t.call('GET', '/metrics', { headers: { 'x-forwarded-for': '203.0.113.9' } });
    assert.equal(res.status, 403);
    assert.equal(res.json.error.code, 'forbidden');
    assert.match(res.json.error.message, /MEDIAD_METRICS_TOKEN/);
  });

  it('counts pending tasks in the queue depth', async () => {
    const { key } = await t.key('metrics', 'queue');
    await t.server.pool?.stop(0);
    const created = await t.call('POST', '/tasks', {
      key,
      body: { kind: 'ingest', url: origin.url('/fixtures/image-png') },
    });
    assert.equal(created.status, 201, created.text);
    const text = (await t.call('GET', '/metrics')).text;
    assert.equal(sample(text, 'mediad_queue_depth', { status: 'pending' }), 1);
  });
});

describe('GET /metrics with MEDIAD_METRICS_TOKEN', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ MEDIAD_METRICS_TOKEN: 'scrape-secret-123', MEDIAD_SERVE_WORKERS: 'false' });
  });
  after(async () => {
    await s.stop();
  });

  it('requires the token, even from loopback', async () => {
    const none = await s.call('GET', '/metrics');
    assert.equal(none.status, 401);
    assert.equal(none.json.error.code, 'unauthorized');
    assert.match(none.json.error.message, /MEDIAD_METRICS_TOKEN/);
    assert.equal((await s.call('GET', '/metrics', { headers: { authorization: 'Bearer wrong' } })).status, 401);
    const ok = await s.call('GET', '/metrics', {
      headers: { authorization: 'Bearer scrape-secret-123', 'x-forwarded-for': '203.0.113.9' },
    });
    assert.equal(ok.status, 200);
    assert.match(ok.text, /# TYPE mediad_http_requests_total counter/);
    assert.match(ok.text, /# TYPE mediad_queue_depth gauge/);
  });
});
