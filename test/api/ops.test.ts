import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startReceiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';
import { createUserInOrg } from '../../src/services/people/users.js';
import { TASK_KINDS } from '../../src/shapes/task-kinds.js';

// The operations API (issue 15): automation dry runs and run history, webhook test events and the
// delivery log, disabled endpoints, the event filter, the queue and workers, GET /system.

let t: TestServer;
let origin: Origin;
const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];

before(async () => {
  origin = await startOrigin();
  // Receivers and the origin listen on loopback: the operator allows that host for outbound calls.
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: '127.0.0.1', MEDIAD_WORKER_CONCURRENCY: '2' });
});
after(async () => {
  await t.stop();
  for (const r of receivers) await r.close();
  await origin.close();
});

async function receiver(answer?: Parameters<typeof startReceiver>[0]) {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

const db = () => t.server.runtime.deps.db;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function ingest(key: string, fixture: string): Promise<{ id: string; media_id: string }> {
  const res = await t.call('POST', '/files', { key, body: { url: origin.url(`/fixtures/${fixture}`) } });
  assert.equal(res.status, 201, res.text);
  return res.json.data;
}

/** Rows that a dry run must not create. */
async function rowCounts() {
  const count = async (table: 'tasks' | 'events' | 'files' | 'media' | 'automation_runs' | 'webhook_deliveries') =>
    Number(
      (
        await db()
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    tasks: await count('tasks'),
    events: await count('events'),
    files: await count('files'),
    media: await count('media'),
    runs: await count('automation_runs'),
    deliveries: await count('webhook_deliveries'),
  };
}

describe('automations: dry run and run history', () => {
  it('dry-runs a conditions branch against a video and an image, creating nothing', async () => {
    const { key } = await t.key('ops', 'dry');
    const video = await ingest(key, 'video-mp4');
    const image = await ingest(key, 'image-png');
    const created = await t.call('POST', '/automations', {
      key,
      body: {
        name: 'videos get a poster',
        status: 'paused',
        trigger: {
          kind: 'event',
          event: 'file.created',
          conditions: [{ prop: 'file.kind', op: 'in', value: ['video', 'image'] }],
        },
        workflow: [
          {
            kind: 'conditions',
            conditions: [
              { prop: 'kind', value: 'video' },
              { prop: 'duration', op: 'gt', value: 1 },
            ],
            next: [
              {
                kind: 'image',
                width: 64,
                format: 'jpeg',
                ref: 'poster',
                next: [
                  {
                    kind: 'conditions',
                    conditions: [{ prop: 'file.width', op: 'lte', value: 64 }],
                    next: [{ kind: 'http', url: 'http://127.0.0.1:9/none' }],
                  },
                ],
              },
            ],
          },
          {
            kind: 'nsfw',
            next: [
              {
                kind: 'conditions',
                conditions: [{ prop: 'metadata.nsfw.detected', value: false }],
                next: [{ kind: 'image', width: 32 }],
              },
            ],
          },
        ],
      },
    });
    assert.equal(created.status, 201, created.text);
    const auto = created.json.data.id;
    const before = await rowCounts();

    const onVideo = await t.call('POST', `/automations/${auto}/dry-run`, { key, body: { media_id: video.media_id } });
    assert.equal(onVideo.status, 200, onVideo.text);
    const v = onVideo.json.data;
    assert.equal(v.object, 'automation_dry_run');
    assert.equal(v.automation_status, 'paused');
    assert.equal(v.file_id, video.id);
    assert.equal(v.would_start, true);
    assert.deepEqual(v.trigger.conditions, [
      { prop: 'file.kind', op: 'in', value: ['video', 'image'], actual: 'video', passed: true },
    ]);
    const step = (path: string) => v.steps.find((s: any) => s.path === path);
    assert.deepEqual(
      v.steps.map((s: any) => s.path),
      [
        'workflow[0]',
        'workflow[0].next[0]',
        'workflow[0].next[0].next[0]',
        'workflow[0].next[0].next[0].next[0]',
        'workflow[1]',
        'workflow[1].next[0]',
        'workflow[1].next[0].next[0]',
      ],
    );
    assert.equal(step('workflow[0]').runs, 'yes');
    assert.equal(step('workflow[0]').input_file_id, video.id);
    assert.equal(step('workflow[0]').branch, 'taken');
    assert.deepEqual(
      step('workflow[0]').conditions.map((c: any) => [c.prop, c.passed]),
      [
        ['kind', true],
        ['duration', true],
      ],
    );
    assert.equal(step('workflow[0]').conditions[0].actual, 'video');
    assert.ok(Math.abs(step('workflow[0]').conditions[1].actual - 2) < 0.1, 'the duration compared is the media’s');
    assert.equal(step('workflow[0].next[0]').runs, 'yes');
    // The poster's width is only known once the image step made it.
    const onPoster = step('workflow[0].next[0].next[0]');
    assert.equal(onPoster.runs, 'yes');
    assert.equal(onPoster.input_from, 'workflow[0].next[0]');
    assert.deepEqual(onPoster.conditions[0], {
      prop: 'file.width',
      op: 'lte',
      value: 64,
      passed: null,
      depends_on: 'workflow[0].next[0]',
    });
    assert.equal(onPoster.branch, 'unknown');
    assert.equal(step('workflow[0].next[0].next[0].next[0]').runs, 'unknown');
    assert.match(step('workflow[0].next[0].next[0].next[0]').reason, /depend on workflow\[0\]\.next\[0\]'s output/);
    // The nsfw step's result decides the second branch.
    assert.deepEqual(step('workflow[1].next[0]').conditions[0].depends_on, 'workflow[1]');
    assert.equal(step('workflow[1].next[0].next[0]').runs, 'unknown');
    assert.deepEqual(v.problems, []);

    const onImage = await t.call('POST', `/automations/${auto}/dry-run`, { key, body: { media_id: image.media_id } });
    assert.equal(onImage.status, 200, onImage.text);
    const i = onImage.json.data;
    assert.equal(i.would_start, true);
    const first = i.steps.find((s: any) => s.path === 'workflow[0]');
    assert.equal(first.branch, 'not_taken');
    assert.deepEqual(
      first.conditions.map((c: any) => [c.prop, c.actual, c.passed]),
      [
        ['kind', 'image', false],
        ['duration', undefined, false],
      ],
    );
    for (const path of ['workflow[0].next[0]', 'workflow[0].next[0].next[0]', 'workflow[0].next[0].next[0].next[0]']) {
      const s = i.steps.find((x: any) => x.path === path);
      assert.equal(s.runs, 'no', path);
      assert.match(s.reason, /the conditions of workflow\[0\] do not hold \(kind, duration\)/);
    }
    assert.equal(i.steps.find((s: any) => s.path === 'workflow[1]').runs, 'yes');

    assert.deepEqual(await rowCounts(), before, 'a dry run creates no task, event, file or delivery');
  });

  it('says when the trigger does not hold and which step would fail on the input', async () => {
    const { key } = await t.key('ops', 'dry2');
    const image = await ingest(key, 'image-png');
    const auto = (
      await t.call('POST', '/automations', {
        key,
        body: {
          status: 'paused',
          trigger: { kind: 'event', event: 'file.created', conditions: [{ prop: 'file.kind', value: 'audio' }] },
          workflow: [{ kind: 'audio', format: 'mp3' }],
        },
      })
    ).json.data.id;
    const res = await t.call('POST', `/automations/${auto}/dry-run`, { key, body: { media_id: image.media_id } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.data.would_start, false);
    assert.equal(res.json.data.trigger.conditions[0].passed, false);
    const [step] = res.json.data.steps;
    assert.equal(step.runs, 'no');
    assert.match(step.reason, /trigger’s conditions do not hold/);
    assert.equal(step.problems[0].field, 'workflow[0].kind');
    assert.match(step.problems[0].message, /audio takes .*this file is an image/);

    // Another project's media and automation are 404; a body without media_id is a 400.
    const other = await t.key('ops-other', 'p');
    const foreign = await ingest(other.key, 'image-png');
    assert.equal(
      (await t.call('POST', `/automations/${auto}/dry-run`, { key, body: { media_id: foreign.media_id } })).status,
      404,
    );
    assert.equal(
      (await t.call('POST', `/automations/${auto}/dry-run`, { key: other.key, body: { media_id: foreign.media_id } }))
        .status,
      404,
    );
    const bad = await t.call('POST', `/automations/${auto}/dry-run`, { key, body: {} });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'validation_failed');
  });

  it('lists the runs an automation started, newest first, with every step task', async () => {
    const { key } = await t.key('ops', 'runs');
    const auto = (
      await t.call('POST', '/automations', {
        key,
        body: {
          trigger: { kind: 'event', event: 'file.created', conditions: [{ prop: 'file.ref', value: 'original' }] },
          workflow: [
            {
              kind: 'conditions',
              conditions: [{ prop: 'kind', value: 'image' }],
              next: [{ kind: 'image', width: 16 }],
            },
          ],
        },
      })
    ).json.data.id;
    const none = await t.call('GET', `/automations/${auto}/runs`, { key });
    assert.equal(none.status, 200, none.text);
    assert.deepEqual(none.json.data, []);

    await ingest(key, 'image-png');
    await ingest(key, 'video-mp4');
    const runs = await until('two finished runs', async () => {
      const res = await t.call('GET', `/automations/${auto}/runs`, { key });
      const data = res.json.data as any[];
      return data.length === 2 && data.every((r) => r.status === 'completed' || r.status === 'failed') && data;
    });
    const [newest, oldest] = runs;
    assert.equal(newest.object, 'automation_run');
    assert.ok(newest.created >= oldest.created);
    assert.match(newest.event_id, /^evt_/);
    // The video: the conditions step completed, its branch did not run.
    assert.deepEqual(
      newest.steps.map((s: any) => [s.kind, s.status]),
      [['conditions', 'completed']],
    );
    // The image: conditions, then the image step, every step completed.
    assert.equal(oldest.status, 'completed');
    assert.deepEqual(
      oldest.steps.map((s: any) => [s.kind, s.status]),
      [
        ['conditions', 'completed'],
        ['image', 'completed'],
      ],
    );
    for (const s of oldest.steps) {
      assert.match(s.id, /^task_/);
      assert.ok(s.started && s.finished && s.duration_ms >= 0, JSON.stringify(s));
    }
    const page = await t.call('GET', `/automations/${auto}/runs?limit=1&page=2`, { key });
    assert.deepEqual(
      page.json.data.map((r: any) => r.id),
      [oldest.id],
    );
    assert.equal(page.json.meta.total, 2);
    const other = await t.key('ops-other', 'p');
    assert.equal((await t.call('GET', `/automations/${auto}/runs`, { key: other.key })).status, 404);
  });
});

describe('webhooks: test event, delivery log, disabled endpoints', () => {
  it('sends a signed webhook.test event that shows in the delivery log with its payload', async () => {
    const { key } = await t.key('ops', 'hooks');
    const r = await receiver();
    const ep = (await t.call('POST', '/webhooks', { key, body: { url: r.url(), events: ['task.completed'] } })).json
      .data;
    const sent = await t.call('POST', `/webhooks/${ep.id}/test`, { key });
    assert.equal(sent.status, 202, sent.text);
    const delivery = sent.json.data;
    assert.equal(delivery.event_type, 'webhook.test');
    assert.equal(delivery.status, 'pending');

    const [hit] = await r.waitFor(1);
    // The receiver verifies the Standard Webhooks signature with the endpoint's secret.
    const verified = new Webhook(ep.secret).verify(hit!.body, hit!.headers as Record<string, string>) as any;
    assert.equal(verified.type, 'webhook.test');
    assert.equal(verified.data.endpoint_id, ep.id);
    assert.equal(hit!.headers['webhook-id'], verified.id);

    const done = await until('the test delivered', async () => {
      const res = await t.call('GET', `/webhooks/${ep.id}/deliveries/${delivery.id}`, { key });
      return res.json.data.status === 'delivered' && res.json.data;
    });
    assert.equal(done.payload, hit!.body, 'the log shows the exact bytes sent');
    assert.equal(done.attempts.length, 1);
    assert.equal(done.attempts[0].status_code, 200);
    assert.ok(done.attempts[0].duration_ms >= 0);
    const list = await t.call('GET', `/webhooks/${ep.id}/deliveries`, { key });
    assert.deepEqual(
      list.json.data.map((d: any) => d.id),
      [delivery.id],
    );
    assert.equal(list.json.data[0].payload, undefined, 'lists leave the payload out');
    // Not in the event log: it was never an event of the project.
    const events = await t.call('GET', `/events?type=task.*`, { key });
    assert.ok(events.json.data.every((e: any) => e.id !== verified.id));
  });

  it('shows why an endpoint was disabled, and PATCH {enabled: true} re-enables it', async () => {
    const { key } = await t.key('ops', 'gone');
    const r = await receiver(() => ({ status: 410 }));
    const ep = (await t.call('POST', '/webhooks', { key, body: { url: r.url(), events: ['*'] } })).json.data;
    assert.equal(ep.enabled, true);
    assert.equal(ep.disabled_reason, undefined);
    await t.call('POST', `/webhooks/${ep.id}/test`, { key });
    const disabled = await until('the endpoint disabled', async () => {
      const res = await t.call('GET', `/webhooks/${ep.id}`, { key });
      return res.json.data.status === 'disabled' && res.json.data;
    });
    assert.equal(disabled.enabled, false);
    assert.match(disabled.disabled_reason, /410 Gone/);
    assert.ok(Date.parse(disabled.disabled_at) > 0);
    const [failed] = (await t.call('GET', `/webhooks/${ep.id}/deliveries`, { key })).json.data;
    assert.equal(failed.status, 'failed');
    assert.deepEqual(
      failed.attempts.map((a: any) => [a.status, a.status_code, a.error]),
      [['failed', 410, 'the receiver answered 410']],
    );
    const refused = await t.call('POST', `/webhooks/${ep.id}/test`, { key });
    assert.equal(refused.status, 409);
    assert.equal(refused.json.error.code, 'conflict');

    const contradicting = await t.call('PATCH', `/webhooks/${ep.id}`, {
      key,
      body: { enabled: true, status: 'disabled' },
    });
    assert.equal(contradicting.status, 400);
    assert.equal(contradicting.json.error.details[0].field, 'enabled');

    const enabled = await t.call('PATCH', `/webhooks/${ep.id}`, { key, body: { enabled: true } });
    assert.equal(enabled.status, 200, enabled.text);
    assert.deepEqual(
      [
        enabled.json.data.enabled,
        enabled.json.data.status,
        enabled.json.data.disabled_reason,
        enabled.json.data.disabled_at,
      ],
      [true, 'active', undefined, undefined],
    );
    const row = await db()
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', ep.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([row.disabled_reason, row.disabled_at], [null, null]);

    const off = await t.call('PATCH', `/webhooks/${ep.id}`, { key, body: { enabled: false } });
    assert.deepEqual(
      [off.json.data.status, off.json.data.disabled_reason],
      ['disabled', 'disabled with PATCH /webhooks/{id}'],
    );
    const other = await t.key('ops-other', 'p');
    assert.equal((await t.call('POST', `/webhooks/${ep.id}/test`, { key: other.key })).status, 404);
  });
});

describe('events filter', () => {
  it('filters by one type and by every type of a resource (task.*)', async () => {
    const { key } = await t.key('ops', 'events');
    await t.call('POST', '/media', { key, body: { title: 'x' } });
    const file = await ingest(key, 'image-png');
    const task = await t.call('POST', '/tasks', { key, body: { kind: 'image', file_id: file.id, width: 8 } });
    await waitForTask(t, key, task.json.data.id);
    const all = (await t.call('GET', '/events?limit=100', { key })).json.data.map((e: any) => e.type);
    assert.ok(all.some((x: string) => x.startsWith('media.')) && all.some((x: string) => x.startsWith('task.')));
    const tasks = await t.call('GET', '/events?type=task.*&limit=100', { key });
    assert.equal(tasks.status, 200, tasks.text);
    assert.deepEqual(
      tasks.json.data.map((e: any) => e.type).sort(),
      all.filter((x: string) => x.startsWith('task.')).sort(),
    );
    assert.match(tasks.json.links.next ?? tasks.json.links.self, /type=task.\*/);
    const one = await t.call('GET', '/events?type=task.completed', { key });
    assert.ok(one.json.data.length > 0 && one.json.data.every((e: any) => e.type === 'task.completed'));
    const bad = await t.call('GET', '/events?type=nope.*', { key });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.details[0].field, 'query.type');
  });
});

describe('queue and workers', () => {
  it('lists the workers alive with the task they run for this organisation', async () => {
    const { key, project_id } = await t.key('ops', 'workers');
    const res = await t.call('GET', '/workers', { key });
    assert.equal(res.status, 200, res.text);
    const [worker] = res.json.data;
    assert.equal(worker.object, 'worker');
    assert.equal(worker.pid, process.pid);
    assert.equal(worker.concurrency, 2);
    assert.ok(Date.parse(worker.last_heartbeat) >= Date.parse(worker.started));
    assert.equal(worker.id, t.server.pool?.owner);
    assert.equal(worker.current_task_id, null);

    // A task that hangs (an origin that sends headers, then nothing) shows as the worker's current task.
    const task = (
      await t.call('POST', '/tasks', { key, body: { kind: 'http', url: origin.url('/stall'), method: 'GET' } })
    ).json.data;
    await waitForTask(t, key, task.id, ['processing']);
    const busy = (await t.call('GET', '/workers', { key })).json.data[0];
    assert.equal(busy.current_task_id, task.id);
    assert.deepEqual(busy.current_tasks, [{ id: task.id, kind: 'http', project_id }]);
    // Another organisation sees the worker, not the task.
    const other = await t.key('ops-elsewhere', 'w');
    assert.equal((await t.call('GET', '/workers', { key: other.key })).json.data[0].current_task_id, null);
    assert.equal((await t.call('POST', `/tasks/${task.id}/cancel`, { key })).status, 200);
  });

  it('pauses a kind for the organisation: its tasks stay pending until resumed; other organisations go on', async () => {
    const { key } = await t.key('ops', 'queue');
    const other = await t.key('ops-elsewhere', 'q');
    const hook = await receiver();
    const paused = await t.call('POST', '/queue/kinds/http/pause', { key });
    assert.equal(paused.status, 200, paused.text);
    assert.equal(paused.json.data.kind, 'http');
    assert.equal(paused.json.data.paused, true);

    const mine = (await t.call('POST', '/tasks', { key, body: { kind: 'http', url: hook.url('/mine') } })).json.data;
    const theirs = (
      await t.call('POST', '/tasks', { key: other.key, body: { kind: 'http', url: hook.url('/theirs') } })
    ).json.data;
    assert.equal(
      (await waitForTask(t, other.key, theirs.id)).status,
      'completed',
      'another organisation is not paused',
    );
    await sleep(1200); // a few poll intervals
    assert.equal((await t.call('GET', `/tasks/${mine.id}`, { key })).json.data.status, 'pending');
    const queue = await t.call('GET', '/queue', { key });
    assert.equal(queue.status, 200, queue.text);
    const http = queue.json.data.kinds.find((k: any) => k.kind === 'http');
    assert.equal(http.paused, true);
    assert.ok(http.paused_at);
    assert.equal(http.pending, 1);
    assert.ok(http.oldest_pending_seconds >= 1);
    assert.deepEqual(
      queue.json.data.kinds.map((k: any) => k.kind).sort(),
      [...TASK_KINDS].sort(),
      'every kind is listed',
    );

    const resumed = await t.call('POST', '/queue/kinds/http/resume', { key });
    assert.equal(resumed.json.data.paused, false);
    assert.equal((await waitForTask(t, key, mine.id)).status, 'completed');
    assert.equal(hook.received.length, 2, 'each http task called once');
    const after = (await t.call('GET', '/queue', { key })).json.data.kinds.find((k: any) => k.kind === 'http');
    assert.deepEqual([after.pending, after.paused], [0, false]);

    const unknown = await t.call('POST', '/queue/kinds/teleport/pause', { key });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.json.error.details[0].field, 'params.kind');
  });

  it('is for full access only: a scoped key gets 403', async () => {
    const { key } = await t.key('ops', 'scoped');
    const scoped = (await t.call('POST', '/keys', { key, body: { scopes: ['tasks:write', 'files:read'] } })).json.data
      .key;
    for (const [method, path] of [
      ['GET', '/queue'],
      ['GET', '/workers'],
      ['POST', '/queue/kinds/image/pause'],
    ] as const) {
      const res = await t.call(method, path, { key: scoped });
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal(res.json.error.code, 'insufficient_scope');
    }
    const refused = await t.call('POST', '/keys', { key, body: { scopes: ['queue:read'] } });
    assert.equal(refused.status, 400, 'no queue scopes: the queue is full access only');
    // GET /system answers any authenticated caller.
    assert.equal((await t.call('GET', '/system', { key: scoped })).status, 200);
    assert.equal((await t.call('GET', '/system')).status, 401);
  });
});

describe('queue and workers with sessions', () => {
  it('owners and admins only: a member is refused, an admin pauses and resumes', async () => {
    const { project_id } = await t.key('ops-people', 'main');
    const password = 'correct horse battery staple';
    const session = async (email: string, role: 'member' | 'admin') => {
      await createUserInOrg(t.server.runtime.deps, { email, name: role, password, org: 'ops-people', role });
      const res = await t.call('POST', '/auth/sign-in', { body: { email, password } });
      assert.equal(res.status, 200, res.text);
      const cookie = res.headers['set-cookie']!.split(';')[0]!;
      return (write = false) => ({
        cookie,
        'x-mediad-project': project_id,
        ...(write ? { 'x-csrf-token': res.json.data.csrf_token, origin: t.base } : {}),
      });
    };
    const member = await session('member@ops.example', 'member');
    const admin = await session('admin@ops.example', 'admin');
    for (const [method, path] of [
      ['GET', '/queue'],
      ['GET', '/workers'],
      ['POST', '/queue/kinds/image/pause'],
    ] as const) {
      const res = await t.call(method, path, { headers: member(method === 'POST') });
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal(res.json.error.code, 'insufficient_role');
    }
    assert.equal((await t.call('GET', '/system', { headers: member() })).status, 200);
    assert.equal((await t.call('GET', '/queue', { headers: admin() })).status, 200);
    const paused = await t.call('POST', '/queue/kinds/image/pause', { headers: admin(true) });
    assert.equal(paused.status, 200, paused.text);
    assert.equal(paused.json.data.paused, true);
    const resumed = await t.call('POST', '/queue/kinds/image/resume', { headers: admin(true) });
    assert.equal(resumed.json.data.paused, false);
  });
});

describe('GET /system', () => {
  it('reports version, backends, FFmpeg, engines and queue health without secrets', async () => {
    const { key } = await t.key('ops', 'system');
    const res = await t.call('GET', '/system', { key });
    assert.equal(res.status, 200, res.text);
    const s = res.json.data;
    assert.equal(s.object, 'system');
    assert.match(s.version, /^\d+\.\d+\.\d+/);
    assert.equal(s.database.backend, process.env.MEDIAD_TEST_DATABASE_URL ? 'postgres' : 'sqlite');
    assert.deepEqual(s.storage, { backend: 'disk' });
    assert.deepEqual(
      s.ffmpeg.map((x: any) => [x.tool, x.found]),
      [
        ['ffmpeg', true],
        ['ffprobe', true],
      ],
    );
    assert.match(s.ffmpeg[0].version, /^\d/);
    assert.deepEqual(
      s.engines.local.map((e: any) => e.engine),
      ['pocketsphinx', 'tesseract', 'ffmpeg-scdet', 'nsfwjs'],
    );
    assert.equal(typeof s.engines.kinds.speech, 'string');
    for (const n of ['pending', 'delayed', 'processing', 'waiting', 'failed'])
      assert.equal(typeof s.queue[n], 'number');
    for (const secret of [key, t.dataDir, 'postgres://', 'mediad.db'])
      assert.ok(!res.text.includes(secret), `GET /system must not show ${secret}`);
  });
});
