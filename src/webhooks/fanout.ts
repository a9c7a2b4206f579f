import { iso } from '../deps.js';
import type { Kysely } from 'kysely';
import { compiledTemplate } from '../db/compiled.js';
import type { Database } from '../db/schema.js';
import { wake } from '../db/transact.js';
import type { EventConsumer } from '../events/dispatcher.js';
import { newId } from '../ids.js';
import { toEventObject } from '../shapes/events.js';
import { WEBHOOK_READY } from '../signals.js';
import { subscribes } from './endpoint-rules.js';

/** The project's active endpoints at an event's time, compiled once (db/compiled.ts): read for every event. */
const activeEndpoints = compiledTemplate(
  (db: Kysely<Database>, projectId: string, at: string) =>
    db
      .selectFrom('webhook_endpoints')
      .select(['id', 'url', 'events'])
      .where('project_id', '=', projectId)
      .where('status', '=', 'active')
      .where('created', '<=', at),
  2,
);

/**
 * Fans an event out to the project's active endpoints subscribed to its type: one pending
 * delivery each, due now. Endpoints created after the event do not receive it. The unique
 * (endpoint_id, event_id) index makes a second fan-out of the same event a no-op.
 */
export const endpointConsumer: EventConsumer = async (deps, trx, event) => {
  const { rows: endpoints } = await trx.executeQuery(activeEndpoints(trx, event.project_id, event.created));
  const targets = endpoints.filter((e) => subscribes(JSON.parse(e.events) as string[], event.type));
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
