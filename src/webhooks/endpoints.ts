import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { iso } from '../deps.js';
import type { Database, WebhookEndpointsTable } from '../db/schema.js';
import { endpointShape, type EndpointObject } from '../shapes/webhooks.js';
import { failPendingDeliveries, NOT_SENT_DISABLED } from './deliveries.js';
import { previousSecretExpires, signingSecrets } from './secrets.js';

// What happens to an endpoint as its deliveries succeed and fail: a success resets its count of
// deliveries that exhausted their retries, 410 Gone disables it, and so does the third exhausted
// delivery in a row.

/** After this many deliveries in a row exhaust their retries, the endpoint is disabled. */
export const DISABLE_AFTER_EXHAUSTED = 3;

export type EndpointOutcome = 'delivered' | 'gone' | 'exhausted' | 'other';

type SecretColumns = Pick<WebhookEndpointsTable, 'secret' | 'secret_previous' | 'secret_rotated'>;

/** The secrets an endpoint's deliveries are signed with now (the overlap rule of webhooks/secrets.ts). */
export function endpointSecrets(row: SecretColumns, now: Date): string[] {
  return signingSecrets({ current: row.secret, previous: row.secret_previous, rotated: row.secret_rotated }, now);
}

/** The endpoint as the API shows it at `now`; the secret only when it was just made (create, rotate). */
export function toEndpointObject(row: WebhookEndpointsTable, now: Date, withSecret = false): EndpointObject {
  return endpointShape(
    row,
    previousSecretExpires({ previous: row.secret_previous, rotated: row.secret_rotated }, now),
    withSecret,
  );
}

/** Disables an active endpoint and fails its pending deliveries; `why` is logged and shown as its disabled_reason. */
export async function disableEndpoint(
  log: Logger,
  trx: Kysely<Database>,
  id: string,
  why: string,
  now: Date,
): Promise<void> {
  const res = await trx
    .updateTable('webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: why, disabled_at: iso(now), updated: iso(now) })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) return;
  await failPendingDeliveries(trx, id, NOT_SENT_DISABLED, now);
  log.warn({ endpoint: id, why }, 'webhook endpoint disabled');
}

/** Bookkeeping after an endpoint delivery attempt, in the deliverer's transaction. */
export async function recordEndpointOutcome(
  log: Logger,
  trx: Kysely<Database>,
  id: string,
  outcome: EndpointOutcome,
  now: Date,
): Promise<void> {
  if (outcome === 'delivered') {
    await trx
      .updateTable('webhook_endpoints')
      .set({ failed_deliveries: 0 })
      .where('id', '=', id)
      .where('failed_deliveries', '!=', 0)
      .execute();
  } else if (outcome === 'gone') {
    await disableEndpoint(log, trx, id, 'the receiver answered 410 Gone', now);
  } else if (outcome === 'exhausted') {
    await trx
      .updateTable('webhook_endpoints')
      .set((eb) => ({ failed_deliveries: eb('failed_deliveries', '+', 1) }))
      .where('id', '=', id)
      .execute();
    const row = await trx
      .selectFrom('webhook_endpoints')
      .select('failed_deliveries')
      .where('id', '=', id)
      .executeTakeFirst();
    if (row && row.failed_deliveries >= DISABLE_AFTER_EXHAUSTED) {
      await disableEndpoint(log, trx, id, `${row.failed_deliveries} deliveries in a row failed after every retry`, now);
    }
  }
}
