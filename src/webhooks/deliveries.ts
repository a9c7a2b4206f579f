import type { Kysely } from 'kysely';
import { iso } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Database, WebhookAttemptsTable, WebhookDeliveriesTable } from '../db/schema.js';
import { listPage, type Page, type PageRequest } from '../db/paginate.js';
import { wake } from '../db/transact.js';
import { toEventObject } from '../shapes/events.js';
import { toDeliveryObject, type DeliveryObject } from '../shapes/webhooks.js';
import { WEBHOOK_READY } from '../signals.js';

// Endpoint deliveries as rows: how the API lists them, the manual retry, and failing the
// pending ones of an endpoint that was disabled or deleted.

export const NOT_SENT_DISABLED = 'not sent: the webhook endpoint is disabled';
export const NOT_SENT_DELETED = 'not sent: the webhook endpoint was deleted';

export type DeliveryStatus = WebhookDeliveriesTable['status'];

async function withAttempts(
  db: Kysely<Database>,
  rows: WebhookDeliveriesTable[],
  withPayload = false,
): Promise<DeliveryObject[]> {
  if (rows.length === 0) return [];
  const attempts = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where(
      'delivery_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('attempt')
    .orderBy('created')
    .execute();
  const byDelivery = new Map<string, WebhookAttemptsTable[]>(rows.map((r) => [r.id, []]));
  for (const a of attempts) byDelivery.get(a.delivery_id)?.push(a);
  return rows.map((r) => toDeliveryObject(r, byDelivery.get(r.id) ?? [], withPayload));
}

/** Newest first, each with its attempts in order. */
export async function listDeliveries(
  db: Kysely<Database>,
  endpointId: string,
  request: PageRequest,
  status?: DeliveryStatus,
): Promise<Page<DeliveryObject>> {
  let q = db.selectFrom('webhook_deliveries').where('endpoint_id', '=', endpointId);
  if (status) q = q.where('status', '=', status);
  const page = await listPage(q, (f) => f.selectAll().orderBy('created', 'desc').orderBy('id', 'desc'), request);
  return { ...page, items: await withAttempts(db, page.items) };
}

async function findDelivery(db: Kysely<Database>, endpointId: string, id: string): Promise<WebhookDeliveriesTable> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw new AppError('not_found', `no delivery ${id} for webhook endpoint ${endpointId}`);
  return row;
}

/** One delivery with its attempts and the exact payload sent. */
export async function getDelivery(db: Kysely<Database>, endpointId: string, id: string): Promise<DeliveryObject> {
  const [obj] = await withAttempts(db, [await findDelivery(db, endpointId, id)], true);
  return obj!;
}

/** The type of the event `POST /webhooks/{id}/test` sends (never in the event log, never fanned out). */
export const TEST_EVENT_TYPE = 'webhook.test';

/**
 * A test event for one endpoint, through the normal delivery path: a pending delivery row that
 * the deliverer signs with the endpoint's secrets and sends like any other (retries, attempts,
 * disabling rules and all). Its event id is the webhook-id; the event is not recorded in the log.
 */
export async function enqueueTestDelivery(
  trx: Kysely<Database>,
  endpoint: { id: string; project_id: string; url: string; status: string },
  now: Date,
): Promise<DeliveryObject> {
  if (endpoint.status !== 'active')
    throw new AppError(
      'conflict',
      `webhook endpoint ${endpoint.id} is disabled; enable it (PATCH enabled true) before sending it a test event`,
    );
  const at = iso(now);
  const event = toEventObject({
    id: newId('event'),
    type: TEST_EVENT_TYPE,
    data: JSON.stringify({
      endpoint_id: endpoint.id,
      message: 'A test event sent with POST /webhooks/{id}/test. Verify its signature, then answer 2xx.',
    }),
    created: at,
    chain: null,
  });
  const row: WebhookDeliveriesTable = {
    id: newId('delivery'),
    project_id: endpoint.project_id,
    task_id: null,
    url: endpoint.url,
    event_type: TEST_EVENT_TYPE,
    payload: JSON.stringify(event),
    status: 'pending',
    attempts: 0,
    next_attempt: at,
    lease_expires: null,
    created: at,
    updated: at,
    endpoint_id: endpoint.id,
    event_id: event.id,
  };
  await trx.insertInto('webhook_deliveries').values(row).execute();
  await wake(trx, WEBHOOK_READY);
  return toDeliveryObject(row, [], true);
}

/**
 * Schedules a delivery now, whatever its status: a pending one is brought forward, a failed
 * one resumes its schedule, a delivered one is sent again (same webhook-id, so receivers that
 * dedupe by id see a duplicate). It goes to the endpoint's current url, so fixing the url
 * and retrying reaches the receiver. The endpoint must be active.
 */
export async function retryDelivery(
  trx: Kysely<Database>,
  endpoint: { id: string; url: string; status: string },
  id: string,
  now: Date,
): Promise<DeliveryObject> {
  const row = await findDelivery(trx, endpoint.id, id);
  if (endpoint.status !== 'active')
    throw new AppError(
      'conflict',
      `webhook endpoint ${endpoint.id} is disabled; enable it (PATCH status active) before retrying its deliveries`,
    );
  await trx
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt: iso(now), url: endpoint.url, updated: iso(now) })
    .where('id', '=', row.id)
    .execute();
  await wake(trx, WEBHOOK_READY);
  return getDelivery(trx, endpoint.id, id);
}

/**
 * Fails the endpoint's pending deliveries that are not in flight, each with an attempt that
 * says why nothing was sent. One in flight finishes; the deliverer checks the endpoint
 * before any later attempt.
 */
export async function failPendingDeliveries(
  trx: Kysely<Database>,
  endpointId: string,
  reason: string,
  now: Date,
): Promise<number> {
  const rows = await trx
    .selectFrom('webhook_deliveries')
    .select(['id', 'attempts'])
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .where((w) => w.or([w('lease_expires', 'is', null), w('lease_expires', '<', iso(now))]))
    .execute();
  for (let i = 0; i < rows.length; i += 200) {
    const chunk = rows.slice(i, i + 200);
    await trx
      .insertInto('webhook_attempts')
      .values(
        chunk.map((r) => ({
          id: newId('attempt'),
          delivery_id: r.id,
          attempt: r.attempts + 1,
          status_code: null,
          error: reason,
          duration_ms: 0,
          created: iso(now),
        })),
      )
      .execute();
    await trx
      .updateTable('webhook_deliveries')
      .set((eb) => ({
        status: 'failed' as const,
        attempts: eb('attempts', '+', 1),
        lease_expires: null,
        updated: iso(now),
      }))
      .where(
        'id',
        'in',
        chunk.map((r) => r.id),
      )
      .execute();
  }
  return rows.length;
}
