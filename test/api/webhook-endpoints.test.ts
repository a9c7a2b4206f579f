import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { startReceiver, type Received } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signals as taskSignals, WEBHOOK_READY } from '../../src/signals.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;
let t: TestServer;
const receivers: Receiver[] = [];

before(async () => {
  // Every receiver listens on loopback (any port): the operator allows that host for outbound calls.
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: '127.0.0.1', MEDIAD_SERVE_WORKERS: 'false' });
});
after(async () => {
  await t.stop();
  for (const r of receivers) await r.close();
});

async function receiver(answer?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

const db = () => t.server.runtime.deps.db;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const headersOf = (hit: Received) => hit.headers as Record<string, string>;

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

async function endpoint(key: string, url: string, events: string[] = ['*']) {
  const res = await t.call('POST', '/webhooks', { key, body: { url, events } });
  assert.equal(res.status, 201, res.text);
  return res.json.data as { id: string; secret: string };
}

const newMedia = async (key: string) =>
  (await t.call('POST', '/media', { key, body: { title: 'hello' } })).json.data as { id: string };
const deliveries = async (key: string, id: string) => (await t.call('GET', `/webhooks/${id}/deliveries`, { key })).json;
const endpointRow = (id: string) =>
  db().selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const deliveryRows = (id: string) =>
  db().selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', id).orderBy('created').execute();

describe('webhook endpoints: CRUD and validation', () => {
  it('creates, shows the secret once, lists, updates, deletes', async () => {
    const { key } = await t.key('wh', 'crud');
    const created = await t.call('POST', '/webhooks', {
      key,
      body: { url: 'https://hooks.example.com/in', events: ['media.created', 'media.created'], description: 'prod' },
    });
    assert.equal(created.status, 201, created.text);
    const ep = created.json.data;
    assert.match(ep.id, /^we_/);
    assert.equal(ep.object, 'webhook_endpoint');
    assert.match(ep.secret, /^whsec_/);
    assert.deepEqual(ep.events, ['media.created']);
    assert.equal(ep.status, 'active');
    assert.equal(created.json.links.self, `${t.base}/webhooks/${ep.id}`);

    const got = await t.call('GET', `/webhooks/${ep.id}`, { key });
    assert.equal(got.status, 200);
    assert.ok(!('secret' in got.json.data), 'later reads omit the secret');
    const list = await t.call('GET', '/webhooks', { key });
    assert.deepEqual(
      list.json.data.map((e: any) => e.id),
      [ep.id],
    );
    assert.equal(list.json.meta.total, 1);
    assert.ok(!('secret' in list.json.data[0]));

    const patched = await t.call('PATCH', `/webhooks/${ep.id}`, {
      key,
      body: { events: ['*', 'task.completed'], description: null, status: 'disabled' },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(
      [patched.json.data.events, patched.json.data.description, patched.json.data.status],
      [['*'], undefined, 'disabled'],
    );
    await db().updateTable('webhook_endpoints').set({ failed_deliveries: 2 }).where('id', '=', ep.id).execute();
    const enabled = await t.call('PATCH', `/webhooks/${ep.id}`, { key, body: { status: 'active' } });
    assert.deepEqual(
      [enabled.json.data.status, enabled.json.data.failed_deliveries],
      ['active', 0],
      're-enabling resets the failure count',
    );

    const del = await t.call('DELETE', `/webhooks/${ep.id}`, { key });
    assert.equal(del.status, 200);
    assert.deepEqual(del.json.data, {
      id: ep.id,
      object: 'webhook_endpoint',
      deleted: true,
      message: `${ep.id} deleted`,
    });
    assert.equal((await t.call('GET', `/webhooks/${ep.id}`, { key })).status, 404);
  });

  it('refuses bad URLs, unknown event types and unknown properties with field details', async () => {
    const { key } = await t.key('wh', 'invalid');
    const cases: Array<[unknown, string]> = [
      [{ url: 'ftp://example.com/x', events: ['*'] }, 'url'],
      [{ url: 'not a url', events: ['*'] }, 'url'],
      [{ url: 'https://user:pw@example.com/x', events: ['*'] }, 'url'],
      [{ url: 'http://10.1.2.3/hook', events: ['*'] }, 'url'],
      [{ url: 'http://localhost:9/hook', events: ['*'] }, 'url'],
      [{ url: 'https://example.com/x', events: ['media.exploded'] }, 'events[0]'],
      [{ url: 'https://example.com/x', events: [] }, 'events'],
      [{ url: 'https://example.com/x' }, 'events'],
      [{ url: 'https://example.com/x', events: ['*'], secret: 'mine' }, 'secret'],
    ];
    for (const [body, field] of cases) {
      const res = await t.call('POST', '/webhooks', { key, body });
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.json.error.code, 'validation_failed');
      assert.ok(
        res.json.error.details.some((d: any) => d.field === field),
        `${JSON.stringify(body)} -> ${JSON.stringify(res.json.error.details)}`,
      );
    }
    const ep = await endpoint(key, 'https://example.com/x');
    const bad = await t.call('PATCH', `/webhooks/${ep.id}`, { key, body: { status: 'paused', url: 'gopher://x' } });
    assert.equal(bad.status, 400);
    assert.deepEqual(
      bad.json.error.details.map((d: any) => d.field),
      ['status'],
    );
    assert.equal(
      (await t.call('PATCH', `/webhooks/${ep.id}`, { key, body: { url: 'gopher://x' } })).json.error.details[0].field,
      'url',
    );
  });

  it("keeps projects apart: another project's endpoint is a 404", async () => {
    const a = await t.key('wh', 'iso-a');
    const b = await t.key('wh', 'iso-b');
    const ep = await endpoint(a.key, 'https://example.com/a');
    for (const [method, path, body] of [
      ['GET', `/webhooks/${ep.id}`],
      ['PATCH', `/webhooks/${ep.id}`, { description: 'x' }],
      ['DELETE', `/webhooks/${ep.id}`],
      ['POST', `/webhooks/${ep.id}/rotate-secret`],
      ['GET', `/webhooks/${ep.id}/deliveries`],
    ] as const) {
      const res = await t.call(method, path, { key: b.key, ...(body ? { body } : {}) });
      assert.equal(res.status, 404, `${method} ${path}`);
    }
    assert.equal((await t.call('GET', '/webhooks', { key: b.key })).json.meta.total, 0);
    assert.equal((await t.call('GET', `/webhooks/${ep.id}`, { key: a.key })).status, 200);
  });
});

describe('webhook endpoints: delivery', () => {
  it('delivers an event to subscribed endpoints only, signed with each endpoint secret', async () => {
    const { key } = await t.key('wh', 'fanout');
    const [rMedia, rAll, rTask] = [await receiver(), await receiver(), await receiver()];
    const epMedia = await endpoint(key, rMedia.url(), ['media.created']);
    const epAll = await endpoint(key, rAll.url(), ['*']);
    const epTask = await endpoint(key, rTask.url(), ['task.completed']);
    const media = await newMedia(key);
    const [hitMedia] = await rMedia.waitFor(1);
    const [hitAll] = await rAll.waitFor(1);

    const event = (await t.call('GET', '/events?type=media.created', { key })).json.data[0];
    for (const [hit, ep] of [
      [hitMedia!, epMedia],
      [hitAll!, epAll],
    ] as const) {
      const payload = new Webhook(ep.secret).verify(hit.body, headersOf(hit)) as any;
      assert.deepEqual(payload, event, 'the body is the event object');
      assert.equal(payload.type, 'media.created');
      assert.equal(payload.data.id, media.id);
      assert.equal(hit.headers['webhook-id'], event.id);
      assert.throws(
        () => new Webhook(epTask.secret).verify(hit.body, headersOf(hit)),
        'another endpoint secret does not verify',
      );
    }
    await sleep(300);
    assert.equal(rTask.received.length, 0);
    assert.equal((await deliveryRows(epTask.id)).length, 0);
    const listed = await deliveries(key, epMedia.id);
    assert.equal(listed.meta.total, 1);
    const [d] = listed.data;
    assert.deepEqual(
      [d.object, d.event_id, d.event_type, d.status, d.next_attempt],
      ['webhook_delivery', event.id, 'media.created', 'delivered', undefined],
    );
    assert.equal(d.attempts.length, 1);
    assert.deepEqual(
      [d.attempts[0].status, d.attempts[0].status_code, d.attempts[0].error],
      ['succeeded', 200, undefined],
    );
    assert.equal(typeof d.attempts[0].duration_ms, 'number');
  });

  it('retries a 500 about 5 s later with the same webhook-id, and lists both attempts', async () => {
    const { key } = await t.key('wh', 'retry');
    const r = await receiver((n) => ({ status: n === 1 ? 500 : 200 }));
    const ep = await endpoint(key, r.url(), ['media.created']);
    await newMedia(key);
    const hits = await r.waitFor(2, 20_000);
    assert.equal(hits[0]!.headers['webhook-id'], hits[1]!.headers['webhook-id']);
    assert.ok(hits[1]!.at - hits[0]!.at >= 4000, `second attempt after ${hits[1]!.at - hits[0]!.at} ms`);
    new Webhook(ep.secret).verify(hits[1]!.body, headersOf(hits[1]!));
    const d = await until('delivered', async () => {
      const [row] = (await deliveries(key, ep.id)).data;
      return row.status === 'delivered' && row;
    });
    assert.deepEqual(
      d.attempts.map((a: any) => [a.attempt, a.status, a.status_code]),
      [
        [1, 'failed', 500],
        [2, 'succeeded', 200],
      ],
    );
    assert.match(d.attempts[0].error, /500/);
  });

  it('410 Gone fails the delivery and disables the endpoint', async () => {
    const { key } = await t.key('wh', 'gone');
    const r = await receiver(() => ({ status: 410 }));
    const ep = await endpoint(key, r.url());
    await newMedia(key);
    await r.waitFor(1);
    const disabled = await until('disabled', async () => {
      const got = (await t.call('GET', `/webhooks/${ep.id}`, { key })).json.data;
      return got.status === 'disabled' && got;
    });
    assert.equal(disabled.status, 'disabled');
    assert.equal((await deliveries(key, ep.id)).data[0].status, 'failed');
    await newMedia(key);
    await sleep(400);
    assert.equal((await deliveryRows(ep.id)).length, 1, 'a disabled endpoint gets no new deliveries');
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const { key } = await t.key('wh', 'redirect');
    const elsewhere = await receiver();
    const r = await receiver(() => ({ status: 307, headers: { location: elsewhere.url('/other') } }));
    const ep = await endpoint(key, r.url());
    await newMedia(key);
    await r.waitFor(1);
    const d = await until('attempt', async () =>
      (await deliveries(key, ep.id)).data.find((x: any) => x.attempts.length > 0),
    );
    assert.equal(d.status, 'pending', 'retried on the schedule');
    assert.match(d.attempts[0].error, /redirect/);
    assert.equal(elsewhere.received.length, 0);
  });

  it('signs with the old and the new secret after a rotation', async () => {
    const { key } = await t.key('wh', 'rotate');
    const r = await receiver();
    const ep = await endpoint(key, r.url());
    const rotated = await t.call('POST', `/webhooks/${ep.id}/rotate-secret`, { key });
    assert.equal(rotated.status, 200, rotated.text);
    const fresh = rotated.json.data;
    assert.match(fresh.secret, /^whsec_/);
    assert.notEqual(fresh.secret, ep.secret);
    assert.ok(fresh.previous_secret_expires > new Date(Date.now() + 23 * 3600_000).toISOString());
    await newMedia(key);
    const [hit] = await r.waitFor(1);
    assert.equal(String(hit!.headers['webhook-signature']).split(' ').length, 2);
    for (const s of [ep.secret, fresh.secret]) new Webhook(s).verify(hit!.body, headersOf(hit!));
  });

  it('re-sends a delivery on request (202), with the same webhook-id', async () => {
    const { key } = await t.key('wh', 'manual');
    const r = await receiver();
    const ep = await endpoint(key, r.url());
    await newMedia(key);
    await r.waitFor(1);
    const [d] = (
      await until('delivered', async () => {
        const list = await deliveries(key, ep.id);
        return list.data[0]?.status === 'delivered' && list;
      })
    ).data;
    const res = await t.call('POST', `/webhooks/${ep.id}/deliveries/${d.id}/retry`, { key });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.json.data.status, 'pending');
    const hits = await r.waitFor(2);
    assert.equal(hits[1]!.headers['webhook-id'], hits[0]!.headers['webhook-id']);
    const again = await until('attempt 2', async () => {
      const got = (await t.call('GET', `/webhooks/${ep.id}/deliveries/${d.id}`, { key })).json.data;
      return got.attempts.length === 2 && got.status === 'delivered' && got;
    });
    assert.deepEqual(
      again.attempts.map((a: any) => a.status),
      ['succeeded', 'succeeded'],
    );

    assert.equal(
      (await t.call('POST', `/webhooks/${ep.id}/deliveries/whd_doesnotexist0000/retry`, { key })).status,
      404,
    );
    await t.call('PATCH', `/webhooks/${ep.id}`, { key, body: { status: 'disabled' } });
    const refused = await t.call('POST', `/webhooks/${ep.id}/deliveries/${d.id}/retry`, { key });
    assert.equal(refused.status, 409);
    assert.equal(refused.json.error.code, 'conflict');
  });

  it('stops pending deliveries when the endpoint is deleted or disabled', async () => {
    const { key } = await t.key('wh', 'stop');
    const r = await receiver(() => ({ status: 503 }));
    const doomed = await endpoint(key, r.url());
    const paused = await endpoint(key, r.url());
    await newMedia(key);
    await r.waitFor(2);
    await until(
      'both retries scheduled',
      async () =>
        (
          await db()
            .selectFrom('webhook_attempts')
            .select('id')
            .where(
              'delivery_id',
              'in',
              [...(await deliveryRows(doomed.id)), ...(await deliveryRows(paused.id))].map((d) => d.id),
            )
            .execute()
        ).length === 2,
    );
    assert.equal((await t.call('DELETE', `/webhooks/${doomed.id}`, { key })).status, 200);
    assert.equal((await t.call('PATCH', `/webhooks/${paused.id}`, { key, body: { status: 'disabled' } })).status, 200);
    const [gone] = await deliveryRows(doomed.id);
    assert.equal(gone!.status, 'failed');
    const shown = (await deliveries(key, paused.id)).data[0];
    assert.equal(shown.status, 'failed');
    assert.match(shown.attempts.at(-1).error, /not sent: the webhook endpoint is disabled/);
    // Even if one were due now, nothing more is sent.
    await db()
      .updateTable('webhook_deliveries')
      .set({ next_attempt: new Date(0).toISOString() })
      .where('endpoint_id', 'in', [doomed.id, paused.id])
      .execute();
    taskSignals.emit(WEBHOOK_READY);
    await sleep(400);
    assert.equal(r.received.length, 2);
  });

  it('disables an endpoint after 3 deliveries in a row exhaust their retries; a success resets the count', async () => {
    const { key } = await t.key('wh', 'exhaust');
    let healthy = false;
    const r = await receiver(() => ({ status: healthy ? 200 : 500 }));
    const ep = await endpoint(key, r.url());
    // Fast-forward each delivery to its last scheduled attempt instead of waiting a day and a half.
    const exhaustOne = async (expectFailed: number) => {
      const seen = r.received.length;
      await newMedia(key);
      await r.waitFor(seen + 1);
      const row = await until('pending delivery', async () =>
        (await deliveryRows(ep.id)).find((d) => d.status === 'pending' && d.attempts === 1 && d.lease_expires === null),
      );
      await db()
        .updateTable('webhook_deliveries')
        .set({ attempts: 7, next_attempt: new Date(0).toISOString() })
        .where('id', '=', row.id)
        .execute();
      taskSignals.emit(WEBHOOK_READY);
      await r.waitFor(seen + 2);
      await until(
        `failed_deliveries ${expectFailed}`,
        async () => (await endpointRow(ep.id)).failed_deliveries === expectFailed,
      );
    };
    await exhaustOne(1);
    healthy = true;
    const seen = r.received.length;
    await newMedia(key);
    await r.waitFor(seen + 1);
    await until('reset', async () => (await endpointRow(ep.id)).failed_deliveries === 0);
    healthy = false;
    await exhaustOne(1);
    await exhaustOne(2);
    await exhaustOne(3);
    const got = (await t.call('GET', `/webhooks/${ep.id}`, { key })).json.data;
    assert.deepEqual([got.status, got.failed_deliveries], ['disabled', 3]);
  });
});
