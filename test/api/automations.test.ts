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
  receiver = await startReceiver((n) => ({ status: n === 2 ? 404 : 200 }));
  t = await startTestServer({
    MEDIAD_ALLOWED_URL_HOSTS: `${origin.host},${receiver.host}`,
    MEDIAD_WORKER_CONCURRENCY: '2',
  });
});
after(async () => {
  await t.stop();
  await receiver.close();
  await origin.close();
});

/** The workflow task an automation started for a media (waits for it to appear and end). */
async function runFor(key: string, automationId: string, mediaId: string): Promise<any> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const list = (await t.call('GET', '/tasks?kind=workflow&limit=100', { key })).json.data as any[];
    const run = list.find((x) => x.automation_id === automationId && x.input?.media_id === mediaId);
    if (run && ['completed', 'failed'].includes(run.status))
      return (await t.call('GET', `/tasks/${run.id}`, { key })).json.data;
    assert.ok(Date.now() < deadline, 'the automation ran');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const PIPELINE = [
  { kind: 'image', width: 64, format: 'webp', ref: 'thumb' },
  {
    kind: 'conditions',
    conditions: [
      { prop: 'kind', value: 'VIDEO' },
      { prop: 'file.filesize', op: 'gt', value: 1000 },
    ],
    next: [
      { kind: 'video', width: 160, ref: 'small', next: [{ kind: 'image', ref: 'poster', format: 'jpeg' }] },
      { kind: 'audio', ref: 'sound' },
    ],
  },
];

describe('automations: CRUD and validation', () => {
  it('creates, reads, patches, replaces, lists and deletes; another project sees 404', async () => {
    const { key } = await t.key('auto', 'crud');
    const other = (await t.key('auto', 'other')).key;
    const created = await t.call('POST', '/automations', {
      key,
      body: { name: 'Pipeline', trigger: { kind: 'event', event: 'media.created' }, workflow: PIPELINE },
    });
    assert.equal(created.status, 201, created.text);
    const a = created.json.data;
    assert.match(a.id, /^auto_/);
    assert.equal(a.object, 'automation');
    assert.equal(a.status, 'active');
    assert.deepEqual(a.workflow, PIPELINE);
    assert.equal((await t.call('GET', `/automations/${a.id}`, { key: other })).status, 404);
    const patched = (await t.call('PATCH', `/automations/${a.id}`, { key, body: { status: 'paused' } })).json.data;
    assert.equal(patched.status, 'paused');
    assert.equal(patched.name, 'Pipeline');
    const replaced = await t.call('PUT', `/automations/${a.id}`, {
      key,
      body: { trigger: { kind: 'event', event: 'file.created' }, workflow: [{ kind: 'image', width: 10 }] },
    });
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(replaced.json.data.name, undefined, 'PUT replaces: unsent fields are cleared (and omitted)');
    assert.equal(replaced.json.data.status, 'active');
    const list = (await t.call('GET', '/automations', { key })).json;
    assert.equal(list.meta.limit, 10);
    assert.equal(list.meta.total, 1);
    assert.equal((await t.call('DELETE', `/automations/${a.id}`, { key })).status, 200);
    assert.equal((await t.call('GET', `/automations/${a.id}`, { key })).status, 404);
  });

  it('checks the whole workflow tree and names the path of each problem', async () => {
    const { key } = await t.key('auto', 'invalid');
    const res = await t.call('POST', '/automations', {
      key,
      body: {
        trigger: { kind: 'event', event: 'media.exploded' },
        workflow: [
          { kind: 'teleport' },
          {
            kind: 'image',
            next: [
              { kind: 'video', width: 'wide' },
              { kind: 'video', format: 'mp4', codec: 'vp9' },
            ],
          },
          { kind: 'conditions', conditions: [{ value: 1 }, { prop: 'width', op: 'near', value: 3 }] },
        ],
      },
    });
    assert.equal(res.status, 400, res.text);
    const fields = res.json.error.details.map((d: any) => d.field);
    for (const f of [
      'trigger.event',
      'workflow[0].kind',
      'workflow[1].next[0].width',
      'workflow[1].next[1].codec',
      'workflow[2].conditions[0].prop',
      'workflow[2].conditions[1].op',
    ]) {
      assert.ok(fields.includes(f), `${f} in ${fields.join(', ')}`);
    }
    assert.equal((await t.call('GET', '/automations', { key })).json.meta.total, 0, 'nothing was created');
  });
});

describe('automations: runs', () => {
  it('runs parallel steps, a next chain and a conditions branch on a video, and skips the branch for an image', async () => {
    const { key, project_id } = await t.key('auto', 'runs');
    const a = (
      await t.call('POST', '/automations', {
        key,
        body: { trigger: { kind: 'event', event: 'media.created' }, workflow: PIPELINE },
      })
    ).json.data;
    const paused = (
      await t.call('POST', '/automations', {
        key,
        body: {
          status: 'paused',
          trigger: { kind: 'event', event: 'media.created' },
          workflow: [{ kind: 'image', ref: 'never' }],
        },
      })
    ).json.data;

    const video = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/video-mp4') } })).json.data;
    const image = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-jpeg') } })).json
      .data;
    const videoRun = await runFor(key, a.id, video.media_id);
    const imageRun = await runFor(key, a.id, image.media_id);

    assert.equal(videoRun.status, 'completed', JSON.stringify(videoRun.error));
    const vm = (await t.call('GET', `/media/${video.media_id}`, { key })).json.data;
    assert.deepEqual(Object.keys(vm.urls).sort(), ['original', 'poster', 'small', 'sound', 'thumb']);
    const children = await Promise.all(
      videoRun.workflow.map((c: any) => t.call('GET', `/tasks/${c.id}`, { key }).then((r) => r.json.data)),
    );
    assert.ok(children.every((c: any) => c.parent_id === videoRun.id && c.automation_id === a.id));
    const small = children.find((c: any) => c.options.ref === 'small');
    const poster = children.find((c: any) => c.options.ref === 'poster');
    assert.equal(poster.input.id, small.output.id, 'next runs on its step’s output');
    const cond = children.find((c: any) => c.kind === 'conditions');
    assert.equal(cond.results.continue, true);
    assert.equal(cond.results.passed.length, 2);

    assert.equal(imageRun.status, 'completed', JSON.stringify(imageRun.error));
    const im = (await t.call('GET', `/media/${image.media_id}`, { key })).json.data;
    assert.deepEqual(Object.keys(im.urls).sort(), ['original', 'thumb']);
    const imageCond = (
      await Promise.all(
        imageRun.workflow.map((c: any) => t.call('GET', `/tasks/${c.id}`, { key }).then((r) => r.json.data)),
      )
    ).find((c: any) => c.kind === 'conditions');
    assert.equal(imageCond.results.continue, false);
    assert.equal(imageCond.results.failed[0].prop, 'kind');

    const runs = await t.server.runtime.deps.db
      .selectFrom('automation_runs')
      .selectAll()
      .where('automation_id', 'in', [a.id, paused.id])
      .execute();
    assert.equal(runs.length, 2, 'one run per event and automation; the paused one never fired');
    assert.ok(runs.every((r) => r.automation_id === a.id));
    void project_id;
  });
});

describe('workflow tasks', () => {
  it('POST /tasks kind workflow: a failed step does not stop its independent branch; the parent names it', async () => {
    const { key } = await t.key('auto', 'wf');
    const silent = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/video-noaudio-mp4') } }))
      .json.data;
    const created = await t.call('POST', '/tasks', {
      key,
      body: {
        kind: 'workflow',
        file_id: silent.id,
        workflow: [{ kind: 'audio' }, { kind: 'image', width: 32, ref: 'ok' }, { kind: 'speech' }],
      },
    });
    assert.equal(created.status, 201, created.text);
    const done = await waitForTask(t, key, created.json.data.id);
    assert.equal(done.status, 'failed');
    assert.equal(done.error_code, 'workflow_failed');
    const kids = await Promise.all(
      done.workflow.map((c: any) => t.call('GET', `/tasks/${c.id}`, { key }).then((r) => r.json.data)),
    );
    const byKind = Object.fromEntries(kids.map((k: any) => [k.kind, k]));
    assert.equal(byKind.image.status, 'completed');
    assert.equal(byKind.audio.error_code, 'no_audio_stream');
    assert.equal(byKind.speech.error_code, 'no_audio_stream', 'a step that cannot work on its input fails visibly');
    assert.match(done.error, new RegExp(byKind.audio.id));
    assert.match(done.error, new RegExp(byKind.speech.id));
  });

  it('rejects a bad tree at creation', async () => {
    const { key } = await t.key('auto', 'wf-bad');
    const file = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-png') } })).json.data;
    const res = await t.call('POST', '/tasks', {
      key,
      body: { kind: 'workflow', file_id: file.id, workflow: [{ kind: 'image', next: [{ kind: 'ingest' }] }] },
    });
    assert.equal(res.status, 400);
    assert.equal(res.json.error.details[0].field, 'workflow[0].next[0].kind');
  });
});

describe('http kind', () => {
  it('POSTs the task, media and file JSON to a URL; a non-2xx answer fails the task', async () => {
    const { key } = await t.key('auto', 'http');
    const file = (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-png') } })).json.data;
    receiver.received.length = 0;
    const ok = await waitForTask(
      t,
      key,
      (
        await t.call('POST', '/tasks', {
          key,
          body: { kind: 'http', url: receiver.url('/notify'), file_id: file.id, headers: { 'x-extra': 'yes' } },
        })
      ).json.data.id,
    );
    assert.equal(ok.status, 'completed', JSON.stringify(ok.error));
    assert.equal(ok.output.status, 200);
    assert.equal(ok.output.body, 'ok');
    const [hit] = await receiver.waitFor(1);
    const sent = JSON.parse(hit!.body);
    assert.equal(sent.task.id, ok.id);
    assert.equal(sent.file.id, file.id);
    assert.equal(sent.media.id, file.media_id);
    assert.equal(hit!.headers['x-extra'], 'yes');
    const failed = await waitForTask(
      t,
      key,
      (await t.call('POST', '/tasks', { key, body: { kind: 'http', url: receiver.url('/gone'), body: { hello: 1 } } }))
        .json.data.id,
    );
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error_code, 'source_rejected');
    assert.equal(JSON.parse((await receiver.waitFor(2))[1]!.body).hello, 1);
  });
});
