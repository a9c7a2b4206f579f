import { iso } from '../deps.js';
import type { Kysely } from 'kysely';
import { compiledTemplate } from '../db/compiled.js';
import type { Database } from '../db/schema.js';
import { wake } from '../db/transact.js';
import { oncePerPass, type EventConsumer } from '../events/dispatcher.js';
import { newId } from '../ids.js';
import { toEventObject } from '../shapes/events.js';
import { WEBHOOK_READY } from '../signals.js';
import { subscribes } from './endpoint-rules.js';

/** The project's active endpoints, compiled once (db/compiled.ts), read once per dispatch pass. */
const activeEndpoints = compiledTemplate(
  (db: Kysely<Database>, projectId: string) =>
    db
      .selectFrom('webhook_endpoints')
      .select(['id', 'url', 'events', 'created'])
      .where('project_id', '=', projectId)
      .where('status', '=', 'active'),
  1,
);
const endpointsOf = oncePerPass(
  async (trx, projectId) => (await trx.executeQuery(activeEndpoints(trx, projectId))).rows,
);

/**
 * Fans an event out to the project's active endpoints subscribed to its type: one pending
 * delivery each, due now. Endpoints created after the event do not receive it. The unique
 * (endpoint_id, event_id) index makes a second fan-out of the same event a no-op.
 */
export const endpointConsumer: EventConsumer = async (deps, trx, event) => {
  const targets = (await endpointsOf(trx, event.project_id)).filter(
    (e) => e.created <= event.created && subscribes(JSON.parse(e.events) as string[], event.type),
  );
  if (targets.length === 0) return;
  const payload = JSON.stringify(toEventObject(event));
  const now = iso(deps.clock.now());
  await trx
    .insertInto('webhook_deliveries')
    .values(
      targets.map((e) => ({
        id: newId('delivery'),
        project_id: event.project_id,
        task_id: null,
        url: e.url,
        event_type: event.type,
        payload,
        status: 'pending' as const,
        attempts: 0,
        next_attempt: now,
        lease_expires: null,
        created: now,
        updated: now,
        endpoint_id: e.id,
        event_id: event.id,
      })),
    )
    .onConflict((oc) => oc.columns(['endpoint_id', 'event_id']).doNothing())
    .execute();
  await wake(trx, WEBHOOK_READY);
};
