import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createSealer, generateSecretKey, SecretKeyError } from '../../src/secrets/sealer.js';
import { as, invite, setUpOwner, write, type Owner, type Session } from '../helpers/people.js';
import { startReceiver } from '../helpers/receiver.js';
import { spawnServe } from '../helpers/serve-process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';

// Secrets stay with those allowed them (issue 20, points 1-3): the signing secret is for owners,
// admins and keys given it; a header value written into an http task or step is write-only
// (answers, events, deliveries and webhooks show REDACTED; the database holds it sealed); the app
// log redacts secret query values as the request log does.

const TOKEN = 'Bearer tok-5f1d2c9a-very-secret';

let t: TestServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let ada: Owner;
let member: Session;
let viewer: Session;

before(async () => {
  receiver = await startReceiver();
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: receiver.host, MEDIAD_WORKER_CONCURRENCY: '2' });
  ada = await setUpOwner(t);
  member = (await invite(t, ada.session, ada.orgId, 'mia@example.com', 'member')).session;
  viewer = (await invite(t, ada.session, ada.orgId, 'vic@example.com', 'viewer')).session;
});
after(async () => {
  await t.stop();
  await receiver.close();
});

describe('the webhook signing secret', () => {
  const SECRET_ROUTES = ['/project/webhook-secret', '/project/webhook-secret/rotate'];

  it('is refused to viewers and members, and to keys scoped project:read or project:write', async () => {
    for (const s of [viewer, member]) {
      const read = await t.call('GET', '/project/webhook-secret', { headers: as(t, s, { project: ada.projectId }) });
      assert.equal(read.status, 403, read.text);
      assert.equal(read.json.error.code, 'insufficient_role');
      const rotate = await t.call('POST', SECRET_ROUTES[1]!, write(t, s, undefined, ada.projectId));
      assert.equal(rotate.status, 403, rotate.text);
    }
    for (const scopes of [['project:read'], ['project:write', 'webhooks:write']]) {
      const key = (await t.call('POST', '/keys', { key: ada.key, body: { scopes } })).json.data.key;
      const read = await t.call('GET', '/project/webhook-secret', { key });
      assert.equal(read.status, 403, read.text);
      assert.equal(read.json.error.code, 'insufficient_scope');
      assert.match(read.json.error.message, /secrets:read/);
      assert.doesNotMatch(read.text, /whsec_/);
      // An endpoint's secret is a signing secret too: rotating one answers the new secret.
      const endpoint = (
        await t.call('POST', '/webhooks', { key: ada.key, body: { url: receiver.url('/e'), events: ['*'] } })
      ).json.data;
      const rotated = await t.call('POST', `/webhooks/${endpoint.id}/rotate-secret`, { key });
      assert.equal(rotated.status, 403, rotated.text);
    }
    // Still readable where it was: the project's settings.
    const key = (await t.call('POST', '/keys', { key: ada.key, body: { scopes: ['project:read'] } })).json.data.key;
    assert.equal((await t.call('GET', '/project', { key })).status, 200);
  });

  it('is read and rotated by owners, admins, full keys and keys scoped secrets:read / secrets:write', async () => {
    const admin = (await invite(t, ada.session, ada.orgId, 'adi@example.com', 'admin')).session;
    for (const s of [ada.session, admin]) {
      const read = await t.call('GET', '/project/webhook-secret', { headers: as(t, s, { project: ada.projectId }) });
      assert.equal(read.status, 200, read.text);
      assert.match(read.json.data.secret, /^whsec_/);
    }
    assert.equal((await t.call('GET', '/project/webhook-secret', { key: ada.key })).status, 200);
    const reader = (await t.call('POST', '/keys', { key: ada.key, body: { scopes: ['secrets:read'] } })).json.data.key;
    assert.equal((await t.call('GET', '/project/webhook-secret', { key: reader })).status, 200);
    assert.equal((await t.call('POST', '/project/webhook-secret/rotate', { key: reader })).status, 403);
    const writer = (await t.call('POST', '/keys', { key: ada.key, body: { scopes: ['secrets:write'] } })).json.data.key;
    const rotated = await t.call('POST', '/project/webhook-secret/rotate', { key: writer });
    assert.equal(rotated.status, 200, rotated.text);
    assert.ok(rotated.json.data.previous_secret_expires);
  });
});

describe('header values of http tasks and steps', () => {
  /** Everything stored about the project's tasks, automations, events and deliveries, as text. */
  async function storedText(): Promise<string> {
    const db = t.server.runtime.deps.db;
    const rows = await Promise.all([
      db.selectFrom('tasks').select(['options', 'step', 'output']).execute(),
      db.selectFrom('automations').select(['workflow']).execute(),
      db.selectFrom('events').select(['data']).execute(),
      db.selectFrom('webhook_deliveries').select(['payload']).execute(),
    ]);
    return JSON.stringify(rows);
  }

  it('reach the receiver, and every reader sees REDACTED: tasks, events, deliveries and webhook bodies', async () => {
    const endpoint = (
      await t.call('POST', '/webhooks', {
        key: ada.key,
        body: { url: receiver.url('/all-events'), events: ['*'] },
      })
    ).json.data;
    receiver.received.length = 0;
    const created = await t.call('POST', '/tasks', {
      key: ada.key,
      body: {
        kind: 'http',
        url: receiver.url('/call'),
        headers: { Authorization: TOKEN, 'X-Plain': 'fine' },
        webhook_url: receiver.url('/task-hook'),
      },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json.data.options.headers, { Authorization: 'REDACTED', 'X-Plain': 'REDACTED' });
    const done = await waitForTask(t, ada.key, created.json.data.id);
    assert.equal(done.status, 'completed', done.error);
    const call = receiver.received.find((r) => r.headers.authorization !== undefined);
    assert.equal(call?.headers.authorization, TOKEN, 'the request carries the real value');
    assert.equal(call?.headers['x-plain'], 'fine');

    // Webhook endpoint deliveries (task.created, task.completed) and the task webhook.
    const deadline = Date.now() + 20_000;
    while (receiver.received.filter((r) => r.headers['webhook-id']).length < 3 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const signed = receiver.received.filter((r) => r.headers['webhook-id']);
    assert.ok(signed.length >= 3, `webhooks received: ${signed.length}`);
    for (const r of signed) {
      assert.doesNotMatch(r.body, /tok-5f1d2c9a/);
      assert.match(r.body, /REDACTED/);
    }
    const reads = [
      await t.call('GET', `/tasks/${done.id}`, { key: ada.key }),
      await t.call('GET', '/tasks?kind=http', { key: ada.key }),
      await t.call('GET', '/events?type=task.*&limit=100', { key: ada.key }),
      await t.call('GET', `/webhooks/${endpoint.id}/deliveries`, { key: ada.key }),
      await t.call('GET', '/tasks', { headers: as(t, viewer, { project: ada.projectId }) }),
    ];
    const deliveries = reads[3]!.json.data as { id: string }[];
    assert.ok(deliveries.length > 0);
    for (const d of deliveries)
      reads.push(await t.call('GET', `/webhooks/${endpoint.id}/deliveries/${d.id}`, { key: ada.key }));
    for (const r of reads) {
      assert.equal(r.status, 200, r.text);
      assert.doesNotMatch(r.text, /tok-5f1d2c9a/);
    }
    assert.equal(reads[0]!.json.data.options.headers.Authorization, 'REDACTED');
    assert.doesNotMatch(await storedText(), /tok-5f1d2c9a/, 'stored sealed, not in the clear');
    assert.match(await storedText(), /sealed:v1:/);
  });

  it('are kept by a retry, and by an automation read back and written again', async () => {
    // A retry sends the same header again.
    let fail = true;
    const flaky = await startReceiver(() => ({ status: fail ? 400 : 200 }));
    const t2 = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: flaky.host });
    try {
      const { key, project_id } = await t2.key();
      const task = (
        await t2.call('POST', '/tasks', {
          key,
          body: { kind: 'http', url: flaky.url('/x'), method: 'GET', headers: { authorization: TOKEN } },
        })
      ).json.data;
      assert.equal((await waitForTask(t2, key, task.id)).status, 'failed');
      fail = false;
      const again = await t2.call('POST', `/tasks/${task.id}/retry`, { key });
      assert.equal(again.status, 201, again.text);
      assert.equal(again.json.data.options.headers.authorization, 'REDACTED');
      assert.equal((await waitForTask(t2, key, again.json.data.id)).status, 'completed');
      assert.equal(flaky.received.at(-1)!.headers.authorization, TOKEN);

      // An automation's http step: shown REDACTED; PUT back as read, it keeps its value.
      const workflow = [
        {
          kind: 'conditions',
          conditions: [{ prop: 'kind', value: 'image' }],
          next: [{ kind: 'http', url: flaky.url('/nested'), headers: { 'X-Key': 'nested-secret-77' } }],
        },
        { kind: 'http', url: flaky.url('/auto'), method: 'GET', headers: { Authorization: TOKEN } },
      ];
      const made = await t2.call('POST', '/automations', {
        key,
        body: { name: 'a', trigger: { kind: 'event', event: 'media.created' }, workflow },
      });
      assert.equal(made.status, 201, made.text);
      assert.doesNotMatch(made.text, /tok-5f1d2c9a|nested-secret-77/);
      const read = (await t2.call('GET', `/automations/${made.json.data.id}`, { key })).json.data;
      assert.equal(read.workflow[1].headers.Authorization, 'REDACTED');
      assert.equal(read.workflow[0].next[0].headers['X-Key'], 'REDACTED');
      const put = await t2.call('PUT', `/automations/${read.id}`, {
        key,
        body: { name: 'b', trigger: read.trigger, workflow: read.workflow },
      });
      assert.equal(put.status, 200, put.text);
      const stored = await t2.server.runtime.deps.db
        .selectFrom('automations')
        .select('workflow')
        .where('id', '=', read.id)
        .executeTakeFirstOrThrow();
      assert.doesNotMatch(stored.workflow, /REDACTED|tok-5f1d2c9a/);
      const steps = JSON.parse(stored.workflow);
      const sealer = t2.server.runtime.deps.secrets;
      assert.equal(sealer.reveal(steps[1].headers.Authorization, project_id), TOKEN);
      assert.equal(sealer.reveal(steps[0].next[0].headers['X-Key'], project_id), 'nested-secret-77');
    } finally {
      await t2.stop();
      await flaky.close();
    }
  });

  it('a REDACTED value with nothing to keep is refused, naming its place', async () => {
    const res = await t.call('POST', '/automations', {
      key: ada.key,
      body: {
        trigger: { kind: 'event', event: 'media.created' },
        workflow: [{ kind: 'http', url: receiver.url('/r'), headers: { Authorization: 'REDACTED' } }],
      },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.json.error.details[0].field, 'workflow[0].headers.Authorization');
  });

  it('open only with the key and project they were sealed for', () => {
    const key = generateSecretKey();
    const sealer = createSealer([key]);
    const token = sealer.seal('s3', 'prj_a');
    assert.equal(sealer.reveal(token, 'prj_a'), 's3');
    assert.throws(() => sealer.reveal(token, 'prj_b'), SecretKeyError);
    assert.throws(() => createSealer([generateSecretKey()]).reveal(token, 'prj_a'), /MEDIAD_SECRET_KEY/);
    // After a rotation the previous key still opens what it sealed.
    assert.equal(createSealer([generateSecretKey(), key]).reveal(token, 'prj_a'), 's3');
  });
});

describe('the app log', () => {
  it('redacts signatures, keys, tokens and passwords in the query, as the request log does', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-log-'));
    const serve = await spawnServe(dataDir, { MEDIAD_LOG_LEVEL: 'info' }, { stdout: true });
    try {
      const urls = [
        '/d/prj_x/media/a.mp4?expiry=9999999999&method=get&signature=c2lnbmF0dXJlLXZhbHVl',
        '/files?api_key=mdk_leakedkey123&limit=5',
        '/files?token=tok-leaked-456&key=k-leaked-789&password=pw-leaked-000',
      ];
      for (const u of urls) await serve.call('GET', u);
      const deadline = Date.now() + 5000;
      while (!serve.stdout().includes('pw-leaked') && !serve.stdout().includes('password=REDACTED')) {
        assert.ok(Date.now() < deadline, 'the requests were logged');
        await new Promise((r) => setTimeout(r, 50));
      }
      const log = serve.stdout();
      assert.match(log, /"url":"\/files\?api_key=REDACTED&limit=5"/);
      for (const leaked of [
        'c2lnbmF0dXJlLXZhbHVl',
        'mdk_leakedkey123',
        'tok-leaked-456',
        'k-leaked-789',
        'pw-leaked-000',
      ])
        assert.ok(!log.includes(leaked), `${leaked} is not in the log`);
    } finally {
      await serve.stop();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('header values stored in the clear by an earlier mediad', () => {
  it('are sealed (tasks, automations) and redacted (events, deliveries) at the next start', async () => {
    const { key, project_id } = await t.key('legacy', 'p');
    const task = (
      await t.call('POST', '/tasks', { key, body: { kind: 'http', url: receiver.url('/l'), headers: { a: 'x' } } })
    ).json.data;
    await waitForTask(t, key, task.id);
    const db = t.server.runtime.deps.db;
    // As an earlier mediad stored it.
    const plain = JSON.stringify({ url: receiver.url('/l'), headers: { a: 'legacy-secret-31' } });
    await db.updateTable('tasks').set({ options: plain }).where('id', '=', task.id).execute();
    await db
      .updateTable('events')
      .set({ data: sql<string>`replace(data, '"a":"REDACTED"', '"a":"legacy-secret-31"')` })
      .where('project_id', '=', project_id)
      .execute();
    await db.deleteFrom('data_passes').execute();
    const { sealStoredSecrets } = await import('../../src/services/media/stored-secrets.js');
    await sealStoredSecrets(t.server.runtime.deps);
    const text = JSON.stringify([
      await db.selectFrom('tasks').select('options').where('id', '=', task.id).execute(),
      await db.selectFrom('events').select('data').where('project_id', '=', project_id).execute(),
    ]);
    assert.doesNotMatch(text, /legacy-secret-31/);
    const stored = await db.selectFrom('tasks').select('options').where('id', '=', task.id).executeTakeFirstOrThrow();
    assert.equal(
      t.server.runtime.deps.secrets.reveal(JSON.parse(stored.options).headers.a, project_id),
      'legacy-secret-31',
    );
  });
});
