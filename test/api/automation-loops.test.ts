import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { parseChain } from '../../src/shapes/events.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Automations whose work triggers them again (hardening issue, point 1): an automation on
// file.created with an image step used to fire on its own output without end.

let origin: Origin;
before(async () => {
  origin = await startOrigin();
});
after(() => origin.close());

async function server(env: Record<string, string> = {}): Promise<{ t: TestServer; key: string; projectId: string }> {
  const t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: origin.host, MEDIAD_WORKER_CONCURRENCY: '2', ...env });
  const k = await t.key('loops', 'main');
  return { t, key: k.key, projectId: k.project_id };
}

const imageStep = (ref: string) => ({ kind: 'image', width: 16, format: 'png', ref });

/** Waits until no task of the project is pending, processing or waiting, and the outbox is dispatched, twice in a row. */
async function settle(t: TestServer, projectId: string): Promise<void> {
  const db = t.server.runtime.deps.db;
  let quiet = 0;
  const deadline = Date.now() + 60_000;
  while (quiet < 2) {
    if (Date.now() > deadline) throw new Error('the project did not settle in 60 s (an automation loop?)');
    await new Promise((r) => setTimeout(r, 300));
    const active = await db
      .selectFrom('tasks')
      .select('id')
      .where('project_id', '=', projectId)
      .where('status', 'in', ['pending', 'processing', 'waiting'])
      .execute();
    const undispatched = await db.selectFrom('events').select('id').where('dispatched', '=', 0).execute();
    quiet = active.length === 0 && undispatched.length === 0 ? quiet + 1 : 0;
  }
}

async function tasksOf(t: TestServer, projectId: string) {
  return t.server.runtime.deps.db.selectFrom('tasks').selectAll().where('project_id', '=', projectId).execute();
}

describe('automation chains', () => {
  it('an automation never fires on its own output (file.created and task.completed triggers)', async () => {
    const { t, key, projectId } = await server();
    try {
      for (const event of ['file.created', 'task.completed']) {
        const auto = await t.call('POST', '/automations', {
          key,
          body: { trigger: { kind: 'event', event }, workflow: [imageStep(`thumb_${event}`)] },
        });
        assert.equal(auto.status, 201, auto.text);
      }
      const file = await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-png') } });
      assert.equal(file.status, 201, file.text);
      await settle(t, projectId);

      const tasks = await tasksOf(t, projectId);
      // The upload's file.created starts the file.created automation (X) once; X's output file and
      // X's image task completing are X's own work, so X does not fire again. The task.completed
      // automation (Y) fires on X's image task (chain X -> Y); Y's own output and task completion
      // hold Y (and X) in their chain, so nothing fires after that. Workflow tasks have no output.
      const workflows = tasks.filter((x) => x.kind === 'workflow');
      assert.equal(workflows.length, 2, JSON.stringify(workflows.map((w) => w.chain)));
      assert.ok(
        tasks.every((x) => x.status === 'completed'),
        JSON.stringify(tasks.map((x) => [x.kind, x.status, x.error])),
      );
      // Nothing ever ran on an event its own automation caused.
      for (const w of workflows) {
        const chain = parseChain(w.chain).automations;
        assert.equal(chain.at(-1), w.automation_id);
        assert.equal(new Set(chain).size, chain.length, `no automation twice in a chain: ${chain.join(' -> ')}`);
      }
      // The output's file.created carries its cause.
      const events = await t.call('GET', '/events?type=file.created&limit=100', { key });
      const caused = events.json.data.filter((e: { cause?: unknown }) => e.cause);
      assert.ok(caused.length >= 1);
      for (const e of caused) {
        assert.match(e.cause.automation_id, /^auto_/);
        assert.equal(e.cause.depth, e.cause.chain.length);
      }
      const uploaded = events.json.data.find((e: { data: { id: string } }) => e.data.id === file.json.data.id);
      assert.equal(uploaded.cause, undefined, 'a client upload has no cause');
    } finally {
      await t.stop();
    }
  });

  it('two automations feeding each other stop after each ran once on the other’s output', async () => {
    const { t, key, projectId } = await server();
    try {
      for (const ref of ['a', 'b']) {
        assert.equal(
          (
            await t.call('POST', '/automations', {
              key,
              body: { trigger: { kind: 'event', event: 'file.created' }, workflow: [imageStep(ref)] },
            })
          ).status,
          201,
        );
      }
      assert.equal(
        (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-png') } })).status,
        201,
      );
      await settle(t, projectId);
      const workflows = (await tasksOf(t, projectId)).filter((x) => x.kind === 'workflow');
      // upload -> A, B; A's output -> B; B's output -> A; then every chain holds both.
      assert.equal(workflows.length, 4, JSON.stringify(workflows.map((w) => w.chain)));
    } finally {
      await t.stop();
    }
  });

  it('a chain stops at MEDIAD_AUTOMATION_MAX_DEPTH, recorded as automation.skipped', async () => {
    const { t, key, projectId } = await server({ MEDIAD_AUTOMATION_MAX_DEPTH: '2' });
    try {
      for (const ref of ['a', 'b', 'c']) {
        assert.equal(
          (
            await t.call('POST', '/automations', {
              key,
              body: { trigger: { kind: 'event', event: 'file.created' }, workflow: [imageStep(ref)] },
            })
          ).status,
          201,
        );
      }
      assert.equal(
        (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-png') } })).status,
        201,
      );
      await settle(t, projectId);
      const workflows = (await tasksOf(t, projectId)).filter((x) => x.kind === 'workflow');
      const depths = workflows.map((w) => parseChain(w.chain).automations.length);
      assert.ok(
        depths.every((d) => d <= 2),
        `depths ${depths.join(',')}`,
      );
      // Depth 1: three runs; depth 2: each output feeds the two others (six runs).
      assert.equal(workflows.length, 9);
      const skipped = await t.call('GET', '/events?type=automation.skipped&limit=100', { key });
      // Recorded once per automation in the chain, not once per event it skipped (six events here).
      assert.equal(skipped.json.meta.total, 3, 'the stop is recorded once per automation');
      const e = skipped.json.data[0];
      assert.equal(e.data.reason, 'chain_depth');
      assert.match(e.data.message, /MEDIAD_AUTOMATION_MAX_DEPTH=2/);
      assert.equal(e.cause.depth, 2);
      assert.match(e.cause.root_event_id, /^evt_/);
    } finally {
      await t.stop();
    }
  });
});

describe('fan-out', () => {
  it('ten automations on one upload stop at the chain budget, recorded once, instead of growing as a power of the depth', async () => {
    // Before the budget: 821 files, 1,640 tasks and 5,040 automation.skipped events.
    const { t, key, projectId } = await server({ MEDIAD_AUTOMATION_CHAIN_TASKS: '30', MEDIAD_WORKER_CONCURRENCY: '2' });
    try {
      for (let i = 0; i < 10; i++)
        assert.equal(
          (
            await t.call('POST', '/automations', {
              key,
              body: { trigger: { kind: 'event', event: 'file.created' }, workflow: [imageStep(`r${i}`)] },
            })
          ).status,
          201,
        );
      const upload = await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-png') } });
      assert.equal(upload.status, 201);
      await settle(t, projectId);
      const tasks = await tasksOf(t, projectId);
      // Each run is a workflow task and one image step: 2 tasks; a budget of 30 allows 15 runs.
      assert.equal(tasks.length, 30, `${tasks.length} tasks`);
      assert.equal(tasks.filter((x) => x.kind === 'workflow').length, 15);
      const root = new Set(tasks.map((x) => parseChain(x.chain).root));
      assert.equal(root.size, 1, 'every run belongs to the upload’s chain');
      const files = await t.call('GET', '/files', { key });
      assert.equal(files.json.meta.total, 16, 'the upload and 15 outputs');
      const skipped = (await t.call('GET', '/events?type=automation.skipped&limit=100', { key })).json.data as any[];
      const budget = skipped.filter((e) => e.data.reason === 'chain_budget');
      assert.equal(budget.length, 1, 'the chain’s stop is recorded once');
      assert.match(budget[0].data.message, /MEDIAD_AUTOMATION_CHAIN_TASKS=30/);
      assert.ok(skipped.length <= 11, `${skipped.length} automation.skipped events`);
    } finally {
      await t.stop();
    }
  });
});

describe('per-project queue limits', () => {
  let t: TestServer;
  before(async () => {
    // No workers: created tasks stay pending.
    t = await startTestServer({
      MEDIAD_ALLOWED_URL_HOSTS: origin.host,
      MEDIAD_WORKER_CONCURRENCY: '0',
      MEDIAD_MAX_PENDING_TASKS: '3',
    });
  });
  after(() => t.stop());

  it('refuses a task past MEDIAD_MAX_PENDING_TASKS with 429 too_many_tasks; other projects are not affected', async () => {
    const { key } = await t.key('limits', 'busy');
    const { key: other } = await t.key('limits', 'quiet');
    const body = { kind: 'ingest', url: origin.url('/fixtures/image-png') };
    for (let i = 0; i < 3; i++) assert.equal((await t.call('POST', '/tasks', { key, body })).status, 201);
    const refused = await t.call('POST', '/tasks', { key, body });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.json.error.code, 'too_many_tasks');
    assert.match(refused.json.error.message, /MEDIAD_MAX_PENDING_TASKS/);
    assert.ok(refused.headers['retry-after']);
    assert.equal((await t.call('GET', '/tasks', { key })).json.meta.total, 3, 'nothing was created');
    assert.equal((await t.call('POST', '/tasks', { key: other, body })).status, 201);
  });

  it('an automation does not start while its project is at the limit, and says so', async () => {
    const { key } = await t.key('limits', 'auto');
    const body = { kind: 'ingest', url: origin.url('/fixtures/image-png') };
    for (let i = 0; i < 3; i++) assert.equal((await t.call('POST', '/tasks', { key, body })).status, 201);
    assert.equal(
      (
        await t.call('POST', '/automations', {
          key,
          body: { trigger: { kind: 'event', event: 'media.created' }, workflow: [imageStep('x')] },
        })
      ).status,
      201,
    );
    assert.equal(
      (await t.call('POST', '/files', { key, body: { url: origin.url('/fixtures/image-png') } })).status,
      201,
    );
    let skipped;
    for (let i = 0; i < 100 && !skipped?.json.meta.total; i++) {
      await new Promise((r) => setTimeout(r, 100));
      skipped = await t.call('GET', '/events?type=automation.skipped', { key });
    }
    assert.equal(skipped!.json.data[0].data.reason, 'too_many_tasks');
    assert.equal((await t.call('GET', '/tasks?kind=workflow', { key })).json.meta.total, 0);
  });
});

describe('fair claiming', () => {
  it('takes the next task from the project with the fewest running, not the oldest backlog', async () => {
    const t = await startTestServer({ MEDIAD_WORKER_CONCURRENCY: '0' });
    try {
      const db = t.server.runtime.deps.db;
      const { insertPending: insertPendingTask, claim } = await import('../../src/queue/task-state.js');
      const claimTask = async (...a: Parameters<typeof claim>) => (await claim(...a))?.task;
      const big = (await t.key('fair', 'big')).project_id;
      const small = (await t.key('fair', 'small')).project_id;
      // Two projects that waited longest but have nothing due: a task not due yet, and a paused kind.
      const later = (await t.key('fair', 'later')).project_id;
      const paused = await t.key('fair-paused', 'paused');
      const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
      await db.transaction().execute(async (trx) => {
        const notDue = await insertPendingTask(
          trx,
          { project_id: later, kind: 'http', options: { url: 'https://example.invalid/' } },
          at(-10),
        );
        await trx
          .updateTable('tasks')
          .set({ run_after: at(86_400_000 * 2) })
          .where('id', '=', notDue.id)
          .execute();
        await insertPendingTask(
          trx,
          { project_id: paused.project_id, kind: 'http', options: { url: 'https://example.invalid/' } },
          at(-5),
        );
        await trx
          .insertInto('queue_pauses')
          .values({ org_id: paused.org_id, kind: 'http', paused: at(0) })
          .execute();
        for (let i = 0; i < 10; i++)
          await insertPendingTask(
            trx,
            { project_id: big, kind: 'http', options: { url: 'https://example.invalid/' } },
            at(i),
          );
        await insertPendingTask(
          trx,
          { project_id: small, kind: 'http', options: { url: 'https://example.invalid/' } },
          at(100),
        );
      });
      const now = new Date(Date.UTC(2026, 0, 2));
      const first = await claimTask(db, 'w1', 30_000, now);
      const second = await claimTask(db, 'w1', 30_000, now);
      const third = await claimTask(db, 'w1', 30_000, now);
      assert.equal(first?.project_id, big, 'both idle: the longest waiting project first');
      assert.equal(second?.project_id, small, 'big has one running, small none');
      assert.equal(third?.project_id, big);
      assert.ok(first!.created < third!.created, 'within a project, oldest first');
      const rest = [];
      for (let task = await claimTask(db, 'w1', 30_000, now); task; task = await claimTask(db, 'w1', 30_000, now))
        rest.push(task.project_id);
      assert.equal(rest.length, 8, 'the rest of big, and nothing of the projects with nothing due');
      assert.ok(rest.every((p) => p === big));
    } finally {
      await t.stop();
    }
  });

  it('on PostgreSQL takes another project’s due task when the fair project’s are locked by claims in flight', async (ctx) => {
    const t = await startTestServer({ MEDIAD_WORKER_CONCURRENCY: '0' });
    try {
      if (!t.databaseUrl) return ctx.skip('SQLite locks no rows');
      const db = t.server.runtime.deps.db;
      const { insertPending: insertPendingTask, claim } = await import('../../src/queue/task-state.js');
      const claimTask = async (...a: Parameters<typeof claim>) => (await claim(...a))?.task;
      const fair = (await t.key('locked', 'fair')).project_id;
      const other = (await t.key('locked', 'other')).project_id;
      const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
      await db.transaction().execute(async (trx) => {
        for (const [project, ms] of [
          [fair, 0],
          [fair, 1],
          [other, 100],
        ] as const)
          await insertPendingTask(
            trx,
            { project_id: project, kind: 'http', options: { url: 'https://example.invalid/' } },
            at(ms),
          );
      });
      // Another worker's claim in flight: it holds the fair project's due rows.
      const inFlight = new pg.Client({ connectionString: t.databaseUrl });
      await inFlight.connect();
      try {
        await inFlight.query('begin');
        await inFlight.query(`select id from tasks where project_id = $1 for update`, [fair]);
        const now = new Date(Date.UTC(2026, 0, 2));
        const taken = await claimTask(db, 'w1', 30_000, now);
        assert.equal(taken?.project_id, other, 'not nothing: the other project’s due task');
        assert.equal(await claimTask(db, 'w1', 30_000, now), undefined, 'the locked rows are skipped');
        await inFlight.query('rollback');
        assert.equal((await claimTask(db, 'w1', 30_000, now))?.project_id, fair, 'free again: the fair project');
      } finally {
        await inFlight.end();
      }
    } finally {
      await t.stop();
    }
  });
});
