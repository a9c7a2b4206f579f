import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { Db } from '../../src/db/connect.js';
import { recordEvent, type EventRow } from '../../src/events/record.js';
import { toEventObject } from '../../src/shapes/events.js';
import type { Deps } from '../../src/deps.js';
import type { GuardedRequestInit, GuardedResponse } from '../../src/net/index.js';
import { createKey } from '../../src/services/people/keys.js';
import { createEndpoint, updateEndpoint } from '../../src/services/media/webhook-endpoints.js';
import { endpointConsumer } from '../../src/webhooks/fanout.js';
import { WebhookDeliverer } from '../../src/webhooks/deliverer.js';
import { memoryDeps } from '../helpers/memory-deps.js';

// Fan-out and delivery against an in-memory database and a scripted client: no network.
let db: Db;
let close: () => Promise<void>;
let deps: Deps;
let projectId: string;

before(async () => {
  ({ db, close, deps } = await memoryDeps({ fetch: { allowPrivate: false, allowHosts: [] } }));
  ({ project_id: projectId } = await createKey(deps, 'unit', 'fanout'));
});
after(() => close());

/** Who makes the endpoints (each change writes an audit record). */
const audit = () => ({ orgId: 'org_unit', projectId, actor: { type: 'anonymous' as const, id: null, ip: null } });

async function event(type: 'media.created' | 'task.completed'): Promise<EventRow> {
  const id = await db
    .transaction()
    .execute((trx) => recordEvent(trx, projectId, type, { id: 'med_x', object: 'media' }, new Date().toISOString()));
  return db
    .selectFrom('events')
    .select(['seq', 'id', 'project_id', 'type', 'data', 'created', 'chain'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}
const fanOut = (e: EventRow) => db.transaction().execute((trx) => endpointConsumer(deps, trx, e));
const rowsFor = (eventId: string) =>
  db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', eventId).execute();

describe('endpointConsumer', () => {
  it('creates one delivery per subscribed active endpoint, once', async () => {
    const scope = { projectId };
    const media = await createEndpoint(
      deps,
      scope,
      { url: 'https://a.example.com/h', events: ['media.created'] },
      audit(),
    );
    const all = await createEndpoint(deps, scope, { url: 'https://b.example.com/h', events: ['*'] }, audit());
    await createEndpoint(deps, scope, { url: 'https://c.example.com/h', events: ['task.completed'] }, audit());
    const off = await createEndpoint(deps, scope, { url: 'https://d.example.com/h', events: ['*'] }, audit());
    await updateEndpoint(deps, scope, off.id, { status: 'disabled' }, audit());
    const other = await createKey(deps, 'unit', 'elsewhere');
    await createEndpoint(
      deps,
      { projectId: other.project_id },
      { url: 'https://e.example.com/h', events: ['*'] },
      audit(),
    );

    const e = await event('media.created');
    await new Promise((r) => setTimeout(r, 5));
    const late = await createEndpoint(deps, scope, { url: 'https://f.example.com/h', events: ['*'] }, audit());
    await fanOut(e);
    await fanOut(e); // a second dispatch of the same event (crash and replay) adds nothing
    const rows = await rowsFor(e.id);
    assert.deepEqual(rows.map((r) => r.endpoint_id).sort(), [media.id, all.id].sort());
    assert.ok(!rows.some((r) => r.endpoint_id === late.id), 'an endpoint created after the event does not get it');
    for (const r of rows) {
      assert.deepEqual(JSON.parse(r.payload), toEventObject(e));
      assert.deepEqual([r.status, r.attempts, r.task_id, r.event_type], ['pending', 0, null, 'media.created']);
      assert.equal(r.url, r.endpoint_id === media.id ? 'https://a.example.com/h' : 'https://b.example.com/h');
    }
  });
});

describe('WebhookDeliverer with endpoint deliveries', () => {
  it('signs with the endpoint secret under the event id, and treats a 3xx as a failure', async () => {
    const ep = await createEndpoint(
      deps,
      { projectId },
      { url: 'https://g.example.com/h', events: ['task.completed'] },
      audit(),
    );
    const e = await event('task.completed');
    await fanOut(e);
    const sent: Array<{ url: string; init: GuardedRequestInit }> = [];
    const client = {
      async request(url: string, init: GuardedRequestInit = {}): Promise<GuardedResponse> {
        sent.push({ url, init });
        return { status: 302, headers: {}, url, body: (async function* () {})() as unknown as GuardedResponse['body'] };
      },
    };
    const deliverer = new WebhookDeliverer(deps, { concurrency: 1, pollMs: 60_000, client });
    deliverer.start();
    const deadline = Date.now() + 5000;
    let row;
    const mine = async () => (await rowsFor(e.id)).find((r) => r.endpoint_id === ep.id);
    while (!(row = await mine()) || row.attempts === 0) {
      assert.ok(Date.now() < deadline, 'the deliverer made an attempt');
      await new Promise((r) => setTimeout(r, 10));
    }
    await deliverer.stop();
    const toG = sent.filter((s) => s.url === 'https://g.example.com/h');
    assert.equal(toG.length, 1);
    const headers = toG[0]!.init.headers!;
    assert.equal(headers['webhook-id'], e.id);
    assert.deepEqual(new Webhook(ep.secret!).verify(String(toG[0]!.init.body), headers), toEventObject(e));
    assert.equal(row.status, 'pending', 'a redirect is retried like any failure');
    const [attempt] = await db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', row.id).execute();
    assert.deepEqual([attempt!.status_code, attempt!.error], [302, 'the receiver answered 302']);
  });
});
