import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';

let t: TestServer;
let origin: Origin;
let key: string;
let projectId: string;

before(async () => {
  origin = await startOrigin();
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host, MEDIAD_WORKER_CONCURRENCY: '2' });
  ({ key, project_id: projectId } = await t.key('tasks', 'main'));
});
after(async () => {
  await t.stop();
  await origin.close();
});

const post = (body: unknown, k = key) => t.call('POST', '/tasks', { key: k, body });

describe('POST /tasks: ingest', () => {
  it('accepts the task as pending, then completes it with the ingested file as output', async () => {
    const res = await post({
      kind: 'ingest',
      url: origin.url('/fixtures/video-mp4'),
      folder: 'in',
      ref: 'original',
      metadata: { a: 1 },
    });
    assert.equal(res.status, 201, res.text);
    assert.ok(!('error' in res.json), 'task responses omit the envelope error key');
    const task = res.json.data;
    assert.match(task.id, /^task_[A-Za-z0-9]{16,}$/);
    assert.equal(task.object, 'task');
    assert.equal(task.status, 'pending');
    assert.equal(task.output, null);
    assert.deepEqual(task.options, { metadata: { a: 1 }, folder: 'in', ref: 'original' });
    assert.equal(res.json.links.self, `${t.base}/tasks/${task.id}`);

    const done = await waitForTask(t, key, task.id);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal(done.progress, 100);
    assert.equal(done.output.object, 'source');
    assert.equal(done.output.kind, 'video');
    assert.equal(done.output.width, 320);
    const file = (await t.call('GET', `/files/${done.output.id}`, { key })).json.data;
    assert.equal(file.folder, 'in');
    assert.deepEqual(file.metadata, { a: 1 });
    const media = (await t.call('GET', `/media/${file.media_id}`, { key })).json.data;
    assert.equal(media.urls.original, file.url);
    const types = (
      await t.server.runtime.deps.db.selectFrom('events').select('type').where('project_id', '=', projectId).execute()
    ).map((e) => e.type);
    for (const type of ['task.created', 'task.completed', 'media.created', 'file.created'])
      assert.ok(types.includes(type), type);
  });

  it('fails permanently, at once, for a source that is not media or answers 404', async () => {
    for (const [path, code] of [
      ['/fixtures/random-bytes', 'media_unsupported'],
      ['/status/404', 'source_rejected'],
    ] as const) {
      const task = (await post({ kind: 'ingest', url: origin.url(path) })).json.data;
      const done = await waitForTask(t, key, task.id);
      assert.equal(done.status, 'failed');
      assert.equal(done.error_code, code);
      assert.equal(done.attempts, 1, 'a permanent failure is not retried');
      assert.equal(done.output, null);
    }
  });
});

describe('POST /tasks: bad input gets a clear 4xx and creates nothing', () => {
  it('refuses unknown kinds, missing or doubled inputs, unknown options and foreign files', async () => {
    const before = (await t.call('GET', '/tasks', { key })).json.meta.total;
    const cases: [unknown, number, string][] = [
      [{ url: origin.url('/x') }, 400, 'validation_failed'],
      [{ kind: 'teleport', url: origin.url('/x') }, 400, 'validation_failed'],
      [{ kind: 'ingest' }, 400, 'validation_failed'],
      [{ kind: 'ingest', url: origin.url('/x'), file_id: 'file_x' }, 400, 'validation_failed'],
      [{ kind: 'ingest', file_id: 'file_x' }, 400, 'validation_failed'],
      [{ kind: 'ingest', url: origin.url('/x'), width: 10 }, 400, 'validation_failed'],
      [{ kind: 'ingest', url: 'not a url' }, 400, 'validation_failed'],
      [{ kind: 'prompt', url: origin.url('/x'), prompt: 'What is shown?' }, 422, 'engine_unavailable'],
    ];
    for (const [body, status, code] of cases) {
      const res = await post(body);
      assert.equal(res.status, status, `${JSON.stringify(body)} -> ${res.text}`);
      assert.equal(res.json.error.code, code);
    }
    const unknown = await post({ kind: 'ingest', url: origin.url('/x'), width: 10 });
    assert.deepEqual(
      unknown.json.error.details.map((d: any) => d.field),
      ['width'],
    );
    assert.equal((await t.call('GET', '/tasks', { key })).json.meta.total, before);
  });
});

describe('GET /tasks', () => {
  it('lists with filters and isolates projects', async () => {
    const other = await t.key('tasks', 'other');
    const mine = (await post({ kind: 'ingest', url: origin.url('/fixtures/image-png') })).json.data;
    await waitForTask(t, key, mine.id);
    const all = (await t.call('GET', '/tasks?limit=100', { key })).json;
    assert.equal(all.meta.total, all.data.length);
    const failed = (await t.call('GET', '/tasks?status=failed&kind=ingest', { key })).json;
    assert.ok(failed.data.length >= 2);
    assert.ok(failed.data.every((x: any) => x.status === 'failed'));
    assert.equal(failed.meta.total, failed.data.length);
    assert.match(failed.links.self, /status=failed/);
    assert.equal((await t.call('GET', '/tasks?status=bogus', { key })).status, 400);
    assert.equal((await t.call('GET', `/tasks/${mine.id}`, { key: other.key })).status, 404);
    assert.equal((await t.call('GET', '/tasks', { key: other.key })).json.meta.total, 0);
  });
});

describe('cancellation', () => {
  it('cancels a pending task; a finished one cannot be cancelled', async () => {
    const idle = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host, MEDIAD_WORKER_CONCURRENCY: '0' });
    try {
      const k = (await idle.key()).key;
      const task = (
        await idle.call('POST', '/tasks', { key: k, body: { kind: 'ingest', url: origin.url('/fixtures/image-png') } })
      ).json.data;
      const res = await idle.call('POST', `/tasks/${task.id}/cancel`, { key: k });
      assert.equal(res.status, 200);
      assert.equal(res.json.data.status, 'cancelled');
      const again = await idle.call('POST', `/tasks/${task.id}/cancel`, { key: k });
      assert.equal(again.status, 409);
      assert.equal((await idle.call('POST', '/tasks/task_nope/cancel', { key: k })).status, 404);
    } finally {
      await idle.stop();
    }
  });

  it('cancels a processing task: its download stops and no output is stored', async () => {
    const task = (await post({ kind: 'ingest', url: origin.url('/stall') })).json.data;
    await waitForTask(t, key, task.id, ['processing']);
    const res = await t.call('POST', `/tasks/${task.id}/cancel`, { key });
    assert.equal(res.json.data.status, 'cancelled');
    await new Promise((r) => setTimeout(r, 300));
    const final = (await t.call('GET', `/tasks/${task.id}`, { key })).json.data;
    assert.equal(final.status, 'cancelled');
    assert.equal(final.output, null);
    assert.equal(t.server.pool!.busy, 0, 'the worker let go of the task');
  });
});
