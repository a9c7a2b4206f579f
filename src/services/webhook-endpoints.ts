import type { Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import { iso } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Database, WebhookEndpointsTable } from '../db/schema.js';
import { listPage, type Page, type PageRequest } from '../db/paginate.js';
import { transact } from '../db/transact.js';
import type { DeliveryObject, EndpointObject } from '../shapes/webhooks.js';
import { toEndpointObject } from '../webhooks/endpoints.js';
import { checkEndpointUrl, normaliseEvents } from '../webhooks/endpoint-rules.js';
import {
  failPendingDeliveries,
  getDelivery,
  listDeliveries,
  NOT_SENT_DELETED,
  NOT_SENT_DISABLED,
  retryDelivery,
  type DeliveryStatus,
} from '../webhooks/deliveries.js';
import { newWebhookSecret } from '../webhooks/secrets.js';

// Webhook endpoints as an API resource. What happens to them as deliveries go (outcomes,
// disabling, signing) lives in webhooks/.

type Scope = { projectId: string };
type EndpointRow = WebhookEndpointsTable;

async function findEndpoint(db: Kysely<Database>, scope: Scope, id: string): Promise<EndpointRow> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('project_id', '=', scope.projectId)
    .where('id', '=', id)
    .executeTakeFirst();
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
    id: newId('endpoint'),
    project_id: scope.projectId,
    url: checkEndpointUrl(input.url, policyOf(deps)),
    events: JSON.stringify(normaliseEvents(input.events)),
    description: input.description ?? null,
    status: 'active',
    secret: newWebhookSecret(),
    secret_previous: null,
    secret_rotated: null,
    failed_deliveries: 0,
    created: iso(now),
    updated: iso(now),
  };
  await deps.db.insertInto('webhook_endpoints').values(row).execute();
  return toEndpointObject(row, now, true);
}

export async function getEndpoint(deps: Deps, scope: Scope, id: string): Promise<EndpointObject> {
  return toEndpointObject(await findEndpoint(deps.db, scope, id), deps.clock.now());
}

export async function listEndpoints(deps: Deps, scope: Scope, request: PageRequest): Promise<Page<EndpointObject>> {
  const page = await listPage(
    deps.db.selectFrom('webhook_endpoints').where('project_id', '=', scope.projectId),
    (q) => q.selectAll().orderBy('created', 'desc').orderBy('id', 'desc'),
    request,
  );
  const now = deps.clock.now();
  return { ...page, items: page.items.map((r) => toEndpointObject(r, now)) };
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
export async function updateEndpoint(
  deps: Deps,
  scope: Scope,
  id: string,
  patch: EndpointPatch,
): Promise<EndpointObject> {
  const url = patch.url === undefined ? undefined : checkEndpointUrl(patch.url, policyOf(deps));
  const events = patch.events === undefined ? undefined : JSON.stringify(normaliseEvents(patch.events));
  return transact(deps.db, async (trx) => {
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
  await transact(deps.db, async (trx) => {
    await findEndpoint(trx, scope, id);
    await trx.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
    await failPendingDeliveries(trx, id, NOT_SENT_DELETED, deps.clock.now());
  });
}

/** A new secret; the old one keeps signing beside it for the overlap (an older previous one is dropped). */
export async function rotateEndpointSecret(deps: Deps, scope: Scope, id: string): Promise<EndpointObject> {
  return transact(deps.db, async (trx) => {
    const row = await findEndpoint(trx, scope, id);
    const now = deps.clock.now();
    const set = {
      secret: newWebhookSecret(),
      secret_previous: row.secret,
      secret_rotated: iso(now),
      updated: iso(now),
    };
    await trx.updateTable('webhook_endpoints').set(set).where('id', '=', id).execute();
    return toEndpointObject({ ...row, ...set }, now, true);
  });
}

export async function listEndpointDeliveries(
  deps: Deps,
  scope: Scope,
  id: string,
  request: PageRequest,
  status?: DeliveryStatus,
): Promise<Page<DeliveryObject>> {
  await findEndpoint(deps.db, scope, id);
  return listDeliveries(deps.db, id, request, status);
}

export async function getEndpointDelivery(
  deps: Deps,
  scope: Scope,
  id: string,
  deliveryId: string,
): Promise<DeliveryObject> {
  await findEndpoint(deps.db, scope, id);
  return getDelivery(deps.db, id, deliveryId);
}

export async function retryEndpointDelivery(
  deps: Deps,
  scope: Scope,
  id: string,
  deliveryId: string,
): Promise<DeliveryObject> {
  return transact(deps.db, async (trx) =>
    retryDelivery(trx, await findEndpoint(trx, scope, id), deliveryId, deps.clock.now()),
  );
}
