import type { Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import { iso } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Database, WebhookEndpointsTable } from '../db/schema.js';
import { toEventObject } from '../db/queries/events.js';
import type { EventConsumer } from '../events/dispatcher.js';
import type { Page } from '../http/envelope.js';
import { checkEndpointUrl, normaliseEvents, subscribes } from '../webhooks/endpoint-rules.js';
import {
  deliveriesReady, failPendingDeliveries, getDelivery, listDeliveries, NOT_SENT_DELETED, NOT_SENT_DISABLED, retryDelivery, type DeliveryObject, type DeliveryStatus,
} from '../webhooks/deliveries.js';
import { newWebhookSecret } from './keys.js';
import { SECRET_OVERLAP_MS } from './projects.js';

type Scope = { projectId: string };
type EndpointRow = WebhookEndpointsTable;

/** After this many deliveries in a row exhaust their retries, the endpoint is disabled. */
export const DISABLE_AFTER_EXHAUSTED = 3;

function previousSecretExpires(row: EndpointRow): string | null {
  if (row.secret_previous === null || row.secret_rotated === null) return null;
  return iso(new Date(Date.parse(row.secret_rotated) + SECRET_OVERLAP_MS));
}

/** The endpoint as the API shows it; the secret only when it was just made (create, rotate). */
export function toEndpointObject(row: EndpointRow, now: Date, withSecret = false) {
  const expires = previousSecretExpires(row);
  return {
    id: row.id,
    object: 'webhook_endpoint' as const,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    status: row.status,
    failed_deliveries: row.failed_deliveries,
    ...(withSecret ? { secret: row.secret } : {}),
    previous_secret_expires: expires !== null && Date.parse(expires) > now.getTime() ? expires : null,
    created: row.created,
    updated: row.updated,
  };
}
export type EndpointObject = ReturnType<typeof toEndpointObject>;

/** The secrets deliveries are signed with now: the current one, and the previous one during the overlap. */
export function endpointSecrets(row: Pick<EndpointRow, 'secret' | 'secret_previous' | 'secret_rotated'>, now: Date): string[] {
  const overlap = row.secret_previous !== null && row.secret_rotated !== null && Date.parse(row.secret_rotated) + SECRET_OVERLAP_MS > now.getTime();
  return overlap ? [row.secret, row.secret_previous!] : [row.secret];
}

export async function findEndpoint(db: Kysely<Database>, scope: Scope, id: string): Promise<EndpointRow> {
  const row = await db.selectFrom('webhook_endpoints').selectAll().where('project_id', '=', scope.projectId).where('id', '=', id).executeTakeFirst();
  if (!row) throw new AppError('not_found', `no webhook endpoint ${id} in this project`);
  return row;
}

const policyOf = (deps: Pick<Deps, 'config'>) => deps.config.fetch;

export interface EndpointInput {
  url: string;
  events: string[];
  description?: string | null;
}

export async function createEndpoint(deps: Deps, scope: Scope, input: EndpointInput): Promise<EndpointObject> {
  const now = deps.clock.now();
  const row: EndpointRow = {
    id: newId('endpoint'), project_id: scope.projectId, url: checkEndpointUrl(input.url, policyOf(deps)), events: JSON.stringify(normaliseEvents(input.events)),
    description: input.description ?? null, status: 'active', secret: newWebhookSecret(), secret_previous: null, secret_rotated: null,
    failed_deliveries: 0, created: iso(now), updated: iso(now),
  };
  await deps.db.insertInto('webhook_endpoints').values(row).execute();
  return toEndpointObject(row, now, true);
}

export async function getEndpoint(deps: Deps, scope: Scope, id: string): Promise<EndpointObject> {
  return toEndpointObject(await findEndpoint(deps.db, scope, id), deps.clock.now());
}

export async function listEndpoints(deps: Deps, scope: Scope, page: number, limit: number): Promise<Page<EndpointObject>> {
  const q = deps.db.selectFrom('webhook_endpoints').where('project_id', '=', scope.projectId);
  const [rows, total] = await Promise.all([
    q.selectAll().orderBy('created', 'desc').orderBy('id', 'desc').limit(limit).offset((page - 1) * limit).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow().then((r) => Number(r.n)),
  ]);
  const now = deps.clock.now();
  return { items: rows.map((r) => toEndpointObject(r, now)), total, page, limit };
}

export interface EndpointPatch {
  url?: string;
  events?: string[];
  description?: string | null;
  status?: 'active' | 'disabled';
}

/**
 * Only the properties sent change. Disabling fails the endpoint's pending deliveries at once
 * (they are not kept for later: the receiver may have changed); re-enabling resets the
 * failure count. A new url applies to deliveries fanned out from now on and to manual retries.
 */
export async function updateEndpoint(deps: Deps, scope: Scope, id: string, patch: EndpointPatch): Promise<EndpointObject> {
  const url = patch.url === undefined ? undefined : checkEndpointUrl(patch.url, policyOf(deps));
  const events = patch.events === undefined ? undefined : JSON.stringify(normaliseEvents(patch.events));
  return deps.db.transaction().execute(async (trx) => {
    const row = await findEndpoint(trx, scope, id);
    const now = deps.clock.now();
    const set: Partial<EndpointRow> = { updated: iso(now) };
    if (url !== undefined) set.url = url;
    if (events !== undefined) set.events = events;
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.status !== undefined && patch.status !== row.status) {
      set.status = patch.status;
      if (patch.status === 'active') set.failed_deliveries = 0;
      else await failPendingDeliveries(trx, id, NOT_SENT_DISABLED, now);
    }
    await trx.updateTable('webhook_endpoints').set(set).where('id', '=', id).execute();
    return toEndpointObject({ ...row, ...set }, now);
  });
}

/** Deletes the endpoint; its pending deliveries are failed so nothing more is sent. */
export async function deleteEndpoint(deps: Deps, scope: Scope, id: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await findEndpoint(trx, scope, id);
    await trx.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
    await failPendingDeliveries(trx, id, NOT_SENT_DELETED, deps.clock.now());
  });
}

/** A new secret; the old one keeps signing beside it for SECRET_OVERLAP_MS (an older previous one is dropped). */
export async function rotateEndpointSecret(deps: Deps, scope: Scope, id: string): Promise<EndpointObject> {
  return deps.db.transaction().execute(async (trx) => {
    const row = await findEndpoint(trx, scope, id);
    const now = deps.clock.now();
    const set = { secret: newWebhookSecret(), secret_previous: row.secret, secret_rotated: iso(now), updated: iso(now) };
    await trx.updateTable('webhook_endpoints').set(set).where('id', '=', id).execute();
    return toEndpointObject({ ...row, ...set }, now, true);
  });
}

export async function listEndpointDeliveries(deps: Deps, scope: Scope, id: string, page: number, limit: number, status?: DeliveryStatus): Promise<Page<DeliveryObject>> {
  await findEndpoint(deps.db, scope, id);
  return listDeliveries(deps.db, id, page, limit, status);
}

export async function getEndpointDelivery(deps: Deps, scope: Scope, id: string, deliveryId: string): Promise<DeliveryObject> {
  await findEndpoint(deps.db, scope, id);
  return getDelivery(deps.db, id, deliveryId);
}

export async function retryEndpointDelivery(deps: Deps, scope: Scope, id: string, deliveryId: string): Promise<DeliveryObject> {
  const delivery = await deps.db.transaction().execute(async (trx) => retryDelivery(trx, await findEndpoint(trx, scope, id), deliveryId, deps.clock.now()));
  deliveriesReady();
  return delivery;
}

/** Disables an active endpoint and fails its pending deliveries; `why` is logged. */
export async function disableEndpoint(deps: Pick<Deps, 'log'>, trx: Kysely<Database>, id: string, why: string, now: Date): Promise<void> {
  const res = await trx.updateTable('webhook_endpoints').set({ status: 'disabled', updated: iso(now) }).where('id', '=', id).where('status', '=', 'active').executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) return;
  await failPendingDeliveries(trx, id, NOT_SENT_DISABLED, now);
  deps.log.warn({ endpoint: id, why }, 'webhook endpoint disabled');
}

/**
 * Bookkeeping after an endpoint delivery attempt, in the deliverer's transaction: a success
 * resets the count of consecutive exhausted deliveries, 410 Gone disables the endpoint, and
 * the third exhausted delivery in a row disables it too.
 */
export async function recordEndpointOutcome(deps: Pick<Deps, 'log'>, trx: Kysely<Database>, id: string, outcome: 'delivered' | 'gone' | 'exhausted' | 'other', now: Date): Promise<void> {
  if (outcome === 'delivered') {
    await trx.updateTable('webhook_endpoints').set({ failed_deliveries: 0 }).where('id', '=', id).where('failed_deliveries', '!=', 0).execute();
  } else if (outcome === 'gone') {
    await disableEndpoint(deps, trx, id, 'the receiver answered 410 Gone', now);
  } else if (outcome === 'exhausted') {
    await trx.updateTable('webhook_endpoints').set((eb) => ({ failed_deliveries: eb('failed_deliveries', '+', 1) })).where('id', '=', id).execute();
    const row = await trx.selectFrom('webhook_endpoints').select('failed_deliveries').where('id', '=', id).executeTakeFirst();
    if (row && row.failed_deliveries >= DISABLE_AFTER_EXHAUSTED) {
      await disableEndpoint(deps, trx, id, `${row.failed_deliveries} deliveries in a row failed after every retry`, now);
    }
  }
}

/**
 * Fans an event out to the project's active endpoints subscribed to its type: one pending
 * delivery each, due now. Endpoints created after the event do not receive it. The unique
 * (endpoint_id, event_id) index makes a second fan-out of the same event a no-op.
 */
export const endpointConsumer: EventConsumer = async (deps, trx, event) => {
  const endpoints = await trx.selectFrom('webhook_endpoints').select(['id', 'url', 'events'])
    .where('project_id', '=', event.project_id).where('status', '=', 'active').where('created', '<=', event.created)
    .execute();
  const targets = endpoints.filter((e) => subscribes(JSON.parse(e.events) as string[], event.type));
  if (targets.length === 0) return { tasks: 0, deliveries: 0 };
  const payload = JSON.stringify(toEventObject(event));
  const now = iso(deps.clock.now());
  await trx.insertInto('webhook_deliveries').values(targets.map((e) => ({
    id: newId('delivery'), project_id: event.project_id, task_id: null, url: e.url, event_type: event.type, payload,
    status: 'pending' as const, attempts: 0, next_attempt: now, lease_expires: null, created: now, updated: now, endpoint_id: e.id, event_id: event.id,
  }))).onConflict((oc) => oc.columns(['endpoint_id', 'event_id']).doNothing()).execute();
  return { tasks: 0, deliveries: targets.length };
};
