import type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEndpointsTable } from '../db/schema.js';

// Webhook endpoints and deliveries as the API shows them.

function toAttemptObject(a: WebhookAttemptsTable) {
  const ok = a.status_code !== null && a.status_code >= 200 && a.status_code <= 299 && a.error === null;
  return {
    attempt: a.attempt,
    status: ok ? ('succeeded' as const) : ('failed' as const),
    status_code: a.status_code ?? undefined,
    duration_ms: a.duration_ms,
    error: a.error ?? undefined,
    created: a.created,
  };
}

/** A delivery as the API shows it; `withPayload`: the exact body sent (the single-delivery read). */
export function toDeliveryObject(d: WebhookDeliveriesTable, attempts: WebhookAttemptsTable[], withPayload = false) {
  return {
    id: d.id,
    object: 'webhook_delivery' as const,
    endpoint_id: d.endpoint_id ?? undefined,
    event_id: d.event_id ?? undefined,
    event_type: d.event_type,
    url: d.url,
    status: d.status,
    // When the next attempt is due; absent once the delivery is delivered or failed.
    next_attempt: d.status === 'pending' ? d.next_attempt : undefined,
    attempts: attempts.map(toAttemptObject),
    // The request body exactly as sent (JSON text: the signature covers these bytes).
    ...(withPayload ? { payload: d.payload } : {}),
    created: d.created,
    updated: d.updated,
  };
}
export type DeliveryObject = ReturnType<typeof toDeliveryObject>;

/**
 * The endpoint as the API shows it; the secret only when it was just made (create, rotate).
 * `previousSecretExpires` comes from the overlap rule (webhooks/secrets.ts).
 */
export function endpointShape(row: WebhookEndpointsTable, previousSecretExpires: string | null, withSecret = false) {
  return {
    id: row.id,
    object: 'webhook_endpoint' as const,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description ?? undefined,
    status: row.status,
    enabled: row.status === 'active',
    // Why and when it was disabled (410 Gone, deliveries failing after every retry, a user); absent while enabled.
    disabled_reason: row.status === 'disabled' ? (row.disabled_reason ?? undefined) : undefined,
    disabled_at: row.status === 'disabled' ? (row.disabled_at ?? undefined) : undefined,
    failed_deliveries: row.failed_deliveries,
    ...(withSecret ? { secret: row.secret } : {}),
    previous_secret_expires: previousSecretExpires ?? undefined,
    created: row.created,
    updated: row.updated,
  };
}
export type EndpointObject = ReturnType<typeof endpointShape>;
