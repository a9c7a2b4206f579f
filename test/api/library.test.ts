import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';

// What the web application's library and task pages ask of the API: media filters and search,
// task filters, retry (one and all failed of a filter), and the project's figures.

let t: TestServer;
let origin: Origin;
let key: string;
const media: Record<string, any> = {};

const call = (method: string, path: string, body?: unknown) =>
  t.call(method, path, { key, ...(body === undefined ? {} : { body }) });
const ids = (res: { json: any }) => res.json.data.map((m: any) => m.id).sort();

before(async () => {
  origin = await startOrigin();
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host, MEDIAD_WORKER_CONCURRENCY: '2' });
  ({ key } = await t.key('library', 'main'));
  const add = async (name: string, body: Record<string, unknown>) => {
    const res = await call('POST', '/files', body);
    assert.equal(res.status, 201, res.text);
    media[name] = (await call('GET', `/media/${res.json.data.media_id}`)).json.data;
    media[name].file = res.json.data;
  };
  await add('video', { url: origin.url('/fixtures/video-mp4'), folder: 'clips/2025' });
  await add('image', { url: origin.url('/fixtures/image-png'), folder: 'stills', filename: 'Cat_Photo.png' });
  await add('audio', { url: origin.url('/fixtures/audio-wav'), folder: 'clips' });
  await call('PATCH', `/media/${media.video.id}`, { title: 'Summer Holiday' });
  await call('PATCH', `/media/${media.audio.id}`, { title: 'Tone at 100% volume' });
});
after(async () => {
  await t.stop();
  await origin.close();
});

describe('GET /media filters and search', () => {
  it('kind, folder (and below), ref, created range', async () => {
    assert.deepEqual(ids(await call('GET', '/media?kind=image')), [media.image.id]);
    assert.deepEqual(ids(await call('GET', '/media?folder=clips')), [media.video.id, media.audio.id].sort());
    assert.deepEqual(ids(await call('GET', '/media?folder=/clips/2025/')), [media.video.id]);
    assert.deepEqual(
      ids(await call('GET', '/media?folder=clip')),
      [],
      'a folder is matched whole, not as a prefix of a name',
    );
    assert.equal((await call('GET', '/media?ref=original')).json.meta.total, 3);
    assert.equal((await call('GET', '/media?ref=thumbnail')).json.meta.total, 0);
    const created = media.image.created;
    const before = await call('GET', `/media?created_before=${encodeURIComponent(created)}`);
    assert.ok(!ids(before).includes(media.image.id));
    assert.ok(ids(before).includes(media.video.id));
    const afterIt = await call('GET', `/media?created_after=${encodeURIComponent(media.video.created)}&kind=audio`);
    assert.deepEqual(ids(afterIt), [media.audio.id]);
  });

  it('q: words of the title or a file name (case and wildcards literal), or an id', async () => {
    assert.deepEqual(ids(await call('GET', '/media?q=holiday')), [media.video.id]);
    assert.deepEqual(ids(await call('GET', '/media?q=CAT_PHOTO')), [media.image.id]);
    assert.deepEqual(ids(await call('GET', '/media?q=100%25')), [media.audio.id], '% is a character, not a wildcard');
    // Unescaped, _ would match the space of "Summer Holiday".
    assert.deepEqual(ids(await call('GET', '/media?q=r_h')), [], '_ is a character, not a wildcard');
    assert.deepEqual(ids(await call('GET', '/media?q=t_p')), [media.image.id]);
    assert.deepEqual(ids(await call('GET', `/media?q=${media.audio.id}`)), [media.audio.id]);
    assert.deepEqual(ids(await call('GET', `/media?q=${media.video.file.id}`)), [media.video.id]);
    assert.deepEqual(ids(await call('GET', '/media?q=nothing-like-this')), []);
  });

  it('keeps the filters in the page links and counts the filtered total', async () => {
    const res = await call('GET', '/media?folder=clips&limit=1');
    assert.equal(res.json.meta.total, 2);
    assert.equal(res.json.meta.pages, 2);
    assert.equal(res.json.links.next, `${t.base}/media?folder=clips&page=2&limit=1`);
    const bare = await t.call('GET', '/media?kind=video&limit=1', { key, headers: { 'accept-version': '2025-08-20' } });
    assert.equal(bare.headers['x-total-count'], '1');
  });

  it('refuses filters it does not know how to read, with the field named', async () => {
    for (const q of ['kind=document', 'status=lost', 'created_after=yesterday', 'folder=../etc']) {
      const res = await call('GET', `/media?${q}`);
      assert.equal(res.status, 400, q);
      assert.equal(res.json.error.code, 'validation_failed', q);
    }
  });
});

describe('tasks: filters, retry, bulk retry, status of media', () => {
  let failedFirst: any;
  let imageTask: any;

  it('filters by media_id (input or output) and automation_id', async () => {
    imageTask = (
      await call('POST', '/tasks', { kind: 'image', file_id: media.image.file.id, width: 50, format: 'png' })
    ).json.data;
    const done = await waitForTask(t, key, imageTask.id);
    assert.equal(done.status, 'completed', done.error);
    const byMedia = await call('GET', `/tasks?media_id=${media.image.id}`);
    assert.deepEqual(
      byMedia.json.data.map((x: any) => x.id),
      [imageTask.id],
    );
    assert.equal(byMedia.json.links.self, `${t.base}/tasks?media_id=${media.image.id}&page=1&limit=20`);
    assert.equal((await call('GET', `/tasks?media_id=${media.video.id}`)).json.meta.total, 0);
    assert.equal((await call('GET', '/tasks?automation_id=auto_nope')).json.meta.total, 0);
    assert.deepEqual(ids(await call('GET', '/media?status=ready&kind=image')), [media.image.id]);
  });

  it('retries a failed task as a new one with the same kind, input and options', async () => {
    failedFirst = (
      await call('POST', '/tasks', {
        kind: 'ingest',
        url: origin.url('/once-missing/image-jpeg'),
        folder: 'retry',
        ref: 'original',
      })
    ).json.data;
    const failed = await waitForTask(t, key, failedFirst.id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error_code, 'source_rejected');

    const res = await call('POST', `/tasks/${failedFirst.id}/retry`);
    assert.equal(res.status, 201, res.text);
    const retry = res.json.data;
    assert.notEqual(retry.id, failedFirst.id);
    assert.equal(retry.retry_of, failedFirst.id);
    assert.equal(retry.kind, 'ingest');
    assert.deepEqual(retry.input, failed.input);
    assert.deepEqual(retry.options, failed.options);
    const done = await waitForTask(t, key, retry.id);
    assert.equal(done.status, 'completed', 'the source answers now');
    assert.equal((await call('GET', `/files/${done.output.id}`)).json.data.folder, 'retry');

    const notFailed = await call('POST', `/tasks/${imageTask.id}/retry`);
    assert.equal(notFailed.status, 409);
    assert.match(notFailed.json.error.message, /only a failed or cancelled task/);
    assert.equal((await call('POST', '/tasks/task_nope/retry')).status, 404);
    const other = await t.key('library-other', 'p');
    assert.equal((await t.call('POST', `/tasks/${failedFirst.id}/retry`, { key: other.key })).status, 404);
  });

  it('retries every failed task of a filter once, and reports those it cannot', async () => {
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const task = (await call('POST', '/tasks', { kind: 'ingest', url: origin.url(`/status/404?n=${i}`) })).json.data;
      made.push(task.id);
    }
    for (const id of made) assert.equal((await waitForTask(t, key, id)).status, 'failed');

    const bad = await call('POST', '/tasks/retry', { status: 'completed' });
    assert.equal(bad.status, 400);
    const res = await call('POST', '/tasks/retry', { kind: 'ingest' });
    assert.equal(res.status, 200, res.text);
    const result = res.json.data;
    assert.equal(result.object, 'retry');
    assert.equal(result.retried, 3, 'the three 404s; the once-missing task was retried already');
    assert.equal(result.tasks.length, 3);
    assert.deepEqual(result.errors, []);
    for (const id of result.tasks)
      assert.equal((await call('GET', `/tasks/${id}`)).json.data.retry_of !== undefined, true);
    for (const id of result.tasks) await waitForTask(t, key, id);
    const again = await call('POST', '/tasks/retry', { kind: 'ingest' });
    assert.equal(again.json.data.retried, 3, 'the retries failed too and are retried in turn; the originals are not');
    for (const id of again.json.data.tasks) await waitForTask(t, key, id);
    const none = await call('POST', '/tasks/retry', { kind: 'image' });
    assert.deepEqual(none.json.data, { object: 'retry', retried: 0, tasks: [], errors: [], more: false });

    // A failed image task whose input file was deleted since cannot run again: it is reported.
    // (The task is marked failed in the database: no image task of a valid file fails on its own.)
    const gone = (await call('POST', '/files', { url: origin.url('/fixtures/image-webp') })).json.data;
    const task = (await call('POST', '/tasks', { kind: 'image', file_id: gone.id, width: 10 })).json.data;
    await waitForTask(t, key, task.id);
    const error = JSON.stringify({ code: 'internal', message: 'made to fail by the test' });
    await t.server.runtime.deps.db
      .updateTable('tasks')
      .set({ status: 'failed', error })
      .where('id', '=', task.id)
      .execute();
    assert.equal((await call('DELETE', `/media/${gone.media_id}`)).status, 200);
    const reported = await call('POST', '/tasks/retry', { kind: 'image' });
    assert.equal(reported.json.data.retried, 0);
    assert.deepEqual(
      reported.json.data.errors.map((e: any) => [e.task_id, e.code]),
      [[task.id, 'not_found']],
    );
    assert.deepEqual(ids(await call('GET', `/media?status=failed`)), [], 'failed ingests have no media');
  });
});

describe('POST /tasks/retry at scale', () => {
  it('takes at most 500 a call (more: true), and answers other requests while it runs', async () => {
    const { key: k, project_id } = await t.key('library', 'bulk');
    // Kept from running: the retried tasks stay pending (their kind is paused).
    assert.equal((await t.call('POST', '/queue/kinds/http/pause', { key: k })).status, 200);
    const first = (await t.call('POST', '/tasks', { key: k, body: { kind: 'http', url: origin.url('/status/404') } }))
      .json.data;
    const db = t.server.runtime.deps.db;
    const row = await db.selectFrom('tasks').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow();
    const error = JSON.stringify({ code: 'source_rejected', message: 'made to fail by the test' });
    await db.updateTable('tasks').set({ status: 'failed', error }).where('id', '=', first.id).execute();
    const copies = Array.from({ length: 620 }, (_, i) => ({
      ...row,
      id: `${row.id}x${String(i).padStart(4, '0')}`,
      status: 'failed' as const,
      error,
    }));
    for (let i = 0; i < copies.length; i += 100)
      await db
        .insertInto('tasks')
        .values(copies.slice(i, i + 100))
        .execute();

    // /health keeps answering while one call retries 500 tasks.
    let retrying = true;
    let answeredMeanwhile = 0;
    const health = (async () => {
      while (retrying) {
        const res = await t.call('GET', '/health');
        if (retrying && res.status === 200) answeredMeanwhile++;
      }
    })();
    const res = await t.call('POST', '/tasks/retry', { key: k, body: { kind: 'http' } });
    retrying = false;
    await health;
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.data.retried, 500);
    assert.equal(res.json.data.more, true);
    assert.ok(answeredMeanwhile >= 3, `/health answered ${answeredMeanwhile} times during the retry`);
    const rest = await t.call('POST', '/tasks/retry', { key: k, body: { kind: 'http' } });
    assert.equal(rest.json.data.retried, 121);
    assert.equal(rest.json.data.more, false);
    assert.equal((await t.call('POST', '/queue/kinds/http/resume', { key: k })).status, 200);
    await db.deleteFrom('tasks').where('project_id', '=', project_id).where('status', '=', 'pending').execute();
  });

  it("another project's media or automation in the filter is a 404", async () => {
    const other = await t.key('library-other', 'retry');
    for (const body of [{ media_id: media.video.id }, { automation_id: 'auto_nothere' }]) {
      const res = await t.call('POST', '/tasks/retry', { key: other.key, body });
      assert.equal(res.status, 404, res.text);
      assert.equal(res.json.error.details[0].field, Object.keys(body)[0]);
    }
  });
});

describe('GET /project/stats', () => {
  it('counts media, files, storage, tasks today and failures of the last day, with the latest failures', async () => {
    const res = await call('GET', '/project/stats');
    assert.equal(res.status, 200, res.text);
    const s = res.json.data;
    assert.equal(s.object, 'project_stats');
    const files = (await call('GET', '/files?limit=100')).json;
    assert.equal(s.files, files.meta.total);
    assert.equal(s.media, (await call('GET', '/media')).json.meta.total);
    assert.equal(
      s.storage_bytes,
      files.data.reduce((n: number, f: any) => n + f.filesize, 0),
    );
    assert.equal(s.tasks_today, (await call('GET', '/tasks')).json.meta.total);
    const failed = (await call('GET', '/tasks?status=failed&limit=100')).json;
    assert.equal(s.failed_24h, failed.meta.total);
    assert.equal(s.recent_failures.length, Math.min(10, failed.meta.total));
    assert.ok(s.recent_failures.every((x: any) => x.status === 'failed' && x.error_code));
    const finished = s.recent_failures.map((x: any) => x.finished);
    assert.deepEqual(finished, [...finished].sort().reverse(), 'newest first');
  });
});
