import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';

// GET /usage: the counters the API keeps per project: bytes delivered (ranges included), run time
// per task kind and tasks per final status (written with the task's end), storage now; ranges.

let t: TestServer;
let origin: Origin;
let key: string;

const usage = (range?: string, k = key) =>
  t.call('GET', `/usage${range === undefined ? '' : `?range=${range}`}`, { key: k });

/** Polls GET /usage?range until `ok` holds (bytes delivered are written in batches). */
async function usageWhen(range: string, ok: (d: any) => boolean): Promise<any> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await usage(range);
    assert.equal(res.status, 200, res.text);
    if (ok(res.json.data)) return res.json.data;
    if (Date.now() > deadline) throw new Error(`usage never matched: ${res.text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  origin = await startOrigin();
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host, MEDIAD_WORKER_CONCURRENCY: '2' });
  ({ key } = await t.key('usage', 'main'));
});
after(async () => {
  await t.stop();
  await origin.close();
});

describe('GET /usage', () => {
  it('starts empty, with one bucket per hour (24h) or UTC day (7d, 30d)', async () => {
    for (const [range, n, interval] of [
      ['24h', 24, 'hour'],
      ['7d', 7, 'day'],
      ['30d', 30, 'day'],
    ] as const) {
      const d = (await usage(range)).json.data;
      assert.equal(d.range, range);
      assert.equal(d.interval, interval);
      assert.equal(d.series.time.length, n);
      assert.equal(d.series.bytes_delivered.length, n);
      assert.equal(d.series.tasks.completed.length, n);
      assert.deepEqual(d.totals, {
        bytes_delivered: 0,
        processing_seconds: {},
        tasks: { completed: 0, failed: 0, cancelled: 0 },
        image_transformations: 0,
        image_derived_bytes: 0,
      });
      assert.equal(d.start, d.series.time[0]);
      assert.ok(Date.parse(d.end) > Date.now(), 'the last bucket is the current one');
    }
    assert.equal((await usage()).json.data.range, '7d', 'the default range');
  });

  it('a bad range is a 400 with the envelope', async () => {
    for (const bad of ['1y', '', '24H']) {
      const res = await usage(bad);
      assert.equal(res.status, 400, bad);
      assert.equal(res.json.error.code, 'validation_failed');
    }
  });

  it('counts bytes delivered (ranges too), tasks and their seconds, storage', async () => {
    const file = await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-png') } });
    assert.equal(file.status, 201, file.text);
    const size: number = file.json.data.filesize;

    const task = await t.call('POST', '/tasks', {
      key,
      body: { kind: 'image', file_id: file.json.data.id, width: 32, format: 'webp' },
    });
    assert.equal(task.status, 201, task.text);
    const done = await waitForTask(t, key, task.json.data.id);
    assert.equal(done.status, 'completed');
    const failing = await t.call('POST', '/tasks', { key, body: { kind: 'image', url: origin.url('/status/404') } });
    assert.equal(failing.status, 201, failing.text);
    assert.equal((await waitForTask(t, key, failing.json.data.id)).status, 'failed');

    // Delivery: the whole file, then 100 bytes of it.
    const ca = { dispatcher: t.agent };
    const whole = await request(file.json.data.url, ca);
    assert.equal((await whole.body.arrayBuffer()).byteLength, size);
    const part = await request(file.json.data.url, { ...ca, headers: { range: 'bytes=0-99' } });
    assert.equal(part.statusCode, 206);
    await part.body.arrayBuffer();
    const head = await request(file.json.data.url, { ...ca, method: 'HEAD' });
    await head.body.dump();

    const files = (await t.call('GET', '/files?limit=100', { key })).json.data;
    const stored = files.reduce((a: number, f: any) => a + f.filesize, 0);
    for (const range of ['24h', '7d', '30d']) {
      // The two deliveries may land in two flushes: wait for both (a HEAD counted would still show).
      const d = await usageWhen(range, (x) => x.totals.bytes_delivered >= size + 100);
      assert.equal(d.totals.bytes_delivered, size + 100, 'the whole file and the range; HEAD sends none');
      assert.equal(d.totals.tasks.completed, 1);
      assert.equal(d.totals.tasks.failed, 1);
      assert.equal(d.totals.tasks.cancelled, 0);
      assert.ok(d.totals.processing_seconds.image > 0, JSON.stringify(d.totals));
      assert.ok(d.totals.processing_seconds.image < 60);
      assert.equal(d.storage_bytes, stored);
      const last = d.series.time.length - 1;
      assert.equal(d.series.bytes_delivered[last], size + 100, 'in the current bucket');
      assert.equal(d.series.tasks.completed[last], 1);
      assert.equal(d.series.processing_seconds.image.length, d.series.time.length);
      assert.equal(d.series.processing_seconds.image[last], d.totals.processing_seconds.image);
    }
  });

  it('cancelled tasks count, and another project sees none of it', async () => {
    // A source that never finishes sending: the task stays active until cancelled.
    const res = await t.call('POST', '/tasks', { key, body: { kind: 'image', url: origin.url('/stall') } });
    assert.equal(res.status, 201, res.text);
    const cancel = await t.call('POST', `/tasks/${res.json.data.id}/cancel`, { key });
    assert.equal(cancel.status, 200, cancel.text);
    assert.equal(cancel.json.data.status, 'cancelled');
    const d = (await usage('24h')).json.data;
    assert.equal(d.totals.tasks.cancelled, 1, 'counted with the cancel, in its transaction');
    assert.equal(d.series.tasks.cancelled[23], 1);

    const other = await t.key('usage-other', 'main');
    const theirs = (await usage('30d', other.key)).json.data;
    assert.deepEqual(theirs.totals, {
      bytes_delivered: 0,
      processing_seconds: {},
      tasks: { completed: 0, failed: 0, cancelled: 0 },
      image_transformations: 0,
      image_derived_bytes: 0,
    });
    assert.equal(theirs.storage_bytes, 0);
  });
});
