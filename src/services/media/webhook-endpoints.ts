import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import { AppError } from '../../errors.js';
import { newId } from '../../ids.js';
import type { Database, WebhookEndpointsTable } from '../../db/schema.js';
import { listPage, type Page, type PageRequest } from '../../db/paginate.js';
import { transact } from '../../db/transact.js';
import type { DeliveryObject, EndpointObject } from '../../shapes/webhooks.js';
import { toEndpointObject } from '../../webhooks/endpoints.js';
import { checkEndpointUrl, normaliseEvents } from '../../webhooks/endpoint-rules.js';
import {
  enqueueTestDelivery,
  failPendingDeliveries,
  getDelivery,
  listDeliveries,
  NOT_SENT_DELETED,
  NOT_SENT_DISABLED,
  retryDelivery,
  type DeliveryStatus,
} from '../../webhooks/deliveries.js';
import { newWebhookSecret } from '../../webhooks/secrets.js';
import { recordAudit, type AuditScope } from '../audit.js';

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

export async function createEndpoint(
  deps: Deps,
  scope: Scope,
  input: EndpointInput,
  audit: AuditScope,
): Promise<EndpointObject> {
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
    disabled_reason: null,
    disabled_at: null,
  };
  await transact(deps.db, async (trx) => {
    await trx.insertInto('webhook_endpoints').values(row).execute();
    await recordAudit(
      trx,
      {
        ...audit,
        action: 'webhook.created',
        target: { type: 'webhook_endpoint', id: row.id },
        details: { url: row.url },
      },
      iso(now),
    );
  });
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
  /** The same switch as `status`, as a boolean (the web application's toggle). */
  enabled?: boolean;
}

export const DISABLED_BY_USER = 'disabled with PATCH /webhooks/{id}';

/** The status a patch asks for: `status` or `enabled` (both sent must agree). */
function wantedStatus(patch: EndpointPatch): 'active' | 'disabled' | undefined {
  const fromEnabled = patch.enabled === undefined ? undefined : patch.enabled ? 'active' : 'disabled';
  if (patch.status !== undefined && fromEnabled !== undefined && patch.status !== fromEnabled)
    throw new AppError('validation_failed', 'status and enabled disagree; send one of them', {
      details: [{ field: 'enabled', message: `contradicts status "${patch.status}"` }],
    });
  return patch.status ?? fromEnabled;
}

/**
 * Only the properties sent change. Disabling fails the endpoint's pending deliveries at once
 * (they are not kept for later: the receiver may have changed); re-enabling resets the
 * failure count and clears why it was disabled. A new url applies to deliveries fanned out from now on and to manual retries.
 */
export async function updateEndpoint(
  deps: Deps,
  scope: Scope,
  id: string,
  patch: EndpointPatch,
  audit: AuditScope,
): Promise<EndpointObject> {
  const url = patch.url === undefined ? undefined : checkEndpointUrl(patch.url, policyOf(deps));
  const eventList = patch.events === undefined ? undefined : normaliseEvents(patch.events);
  const events = eventList === undefined ? undefined : JSON.stringify(eventList);
  const status = wantedStatus(patch);
  return transact(deps.db, async (trx) => {
    const row = await findEndpoint(trx, scope, id);
    const now = deps.clock.now();
    const set: Partial<EndpointRow> = { updated: iso(now) };
    if (url !== undefined) set.url = url;
    if (events !== undefined) set.events = events;
    if (patch.description !== undefined) set.description = patch.description;
    if (status !== undefined && status !== row.status) {
      set.status = status;
      if (status === 'active') Object.assign(set, { failed_deliveries: 0, disabled_reason: null, disabled_at: null });
      else {
        Object.assign(set, { disabled_reason: DISABLED_BY_USER, disabled_at: iso(now) });
        await failPendingDeliveries(trx, id, NOT_SENT_DISABLED, now);
      }
    }
    await trx.updateTable('webhook_endpoints').set(set).where('id', '=', id).execute();
    const changed = { url, events: eventList, description: patch.description, status };
    await recordAudit(
      trx,
      { ...audit, action: 'webhook.updated', target: { type: 'webhook_endpoint', id }, details: changed },
      iso(now),
    );
    return toEndpointObject({ ...row, ...set }, now);
  });
}

/** Deletes the endpoint; its pending deliveries are failed so nothing more is sent. */
export async function deleteEndpoint(deps: Deps, scope: Scope, id: string, audit: AuditScope): Promise<void> {
  await transact(deps.db, async (trx) => {
    const row = await findEndpoint(trx, scope, id);
    const now = iso(deps.clock.now());
    await recordAudit(
      trx,
      { ...audit, action: 'webhook.deleted', target: { type: 'webhook_endpoint', id }, details: { url: row.url } },
      now,
    );
    await trx.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
    await failPendingDeliveries(trx, id, NOT_SENT_DELETED, deps.clock.now());
  });
}

/** A new secret; the old one keeps signing beside it for the overlap (an older previous one is dropped). */
export async function rotateEndpointSecret(
  deps: Deps,
  scope: Scope,
  id: string,
  audit: AuditScope,
): Promise<EndpointObject> {
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
    await recordAudit(
      trx,
      {
        ...audit,
        action: 'webhook.secret_rotated',
        target: { type: 'webhook_endpoint', id },
        details: { url: row.url },
      },
      iso(now),
    );
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

/** Sends the endpoint a `webhook.test` event now, through the normal signed delivery path. */
export async function sendTestEvent(deps: Deps, scope: Scope, id: string): Promise<DeliveryObject> {
  return transact(deps.db, async (trx) =>
    enqueueTestDelivery(trx, await findEndpoint(trx, scope, id), deps.clock.now()),
  );
}
