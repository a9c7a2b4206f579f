import { sql, type Insertable, type Kysely } from 'kysely';
import { compiledTemplate } from '../db/compiled.js';
import type { Database, EventsTable } from '../db/schema.js';
import { heldWrite, valuesOf, wake } from '../db/transact.js';
import { newId } from '../ids.js';
import { chainText, type Chain } from '../shapes/events.js';
import { EVENTS_READY } from '../signals.js';

// The event catalogue and the outbox writer: every change records its event in the transaction
// that makes it, so "saved" and "announced" cannot diverge.

export type EventType =
  | 'media.created'
  | 'media.updated'
  | 'media.deleted'
  | 'file.created'
  | 'file.playable'
  | 'file.deleted'
  | 'task.created'
  | 'task.completed'
  | 'task.failed'
  | 'task.cancelled'
  | 'automation.created'
  | 'automation.updated'
  | 'automation.deleted'
  | 'automation.skipped';

export const EVENT_TYPES: readonly EventType[] = [
  'media.created',
  'media.updated',
  'media.deleted',
  'file.created',
  'file.playable',
  'file.deleted',
  'task.created',
  'task.completed',
  'task.failed',
  'task.cancelled',
  'automation.created',
  'automation.updated',
  'automation.deleted',
  'automation.skipped',
];

/** An outbox row as the dispatcher reads it. */
export interface EventRow {
  seq: number;
  id: string;
  project_id: string;
  type: string;
  data: string;
  created: string;
  chain: string | null;
}

/**
 * An event's `dispatched` flag as it is recorded: 0, for the dispatcher, when its project has an
 * automation or a webhook endpoint (whatever their status, so that pausing or resuming one races
 * with nothing); 1 when it has neither, since nothing would act on the event. A pass for such an
 * event only set its flag, a write and a commit of its own (on PostgreSQL six statements; the
 * server's CPU per small task 0.80 → 0.55 ms without them, bench/pg-trace.ts). Read by the
 * recording statement: in a project with neither, an automation or endpoint committed after it
 * does not get the event (an endpoint never receives events older than itself anyway).
 */
const dispatchedFor = (projectId: string) =>
  sql<number>`case when exists (select 1 from automations where project_id = ${projectId}) or exists (select 1 from webhook_endpoints where project_id = ${projectId}) then 0 else 1 end`;

/** The outbox insert, compiled once (db/compiled.ts): every change makes one or two. */
const insertEvent = compiledTemplate(
  (
    trx: Kysely<Database>,
    id: string,
    projectId: string,
    type: string,
    data: string,
    created: string,
    chain: string | null,
  ) =>
    trx
      .insertInto('events')
      .values({ id, project_id: projectId, type, data, created, chain, dispatched: dispatchedFor(projectId) }),
  6,
);

type NewEvent = Omit<Insertable<EventsTable>, 'dispatched'>;

/**
 * In a transact transaction the events are inserted at its end, with its other held-back writes
 * and in one statement (db/transact.ts): on PostgreSQL a task's completion recorded two events,
 * two round trips of its transaction's nine. Keyed by their order, so they keep it (and `seq`).
 */
const heldEvents = heldWrite('events', {
  args: valuesOf<NewEvent>,
  build: (t, events) =>
    t.insertInto('events').values(events.map((e) => ({ ...e, dispatched: dispatchedFor(e.project_id) }))),
});

/** Writes an outbox row in the caller's transaction; the dispatchers wake once it commits. */
export async function recordEvent(
  trx: Kysely<Database>,
  projectId: string,
  type: EventType,
  data: unknown,
  created: string,
  chain?: Chain,
): Promise<string> {
  const id = newId('event');
  const row = { id, project_id: projectId, type, data: JSON.stringify(data), created, chain: chainText(chain) };
  const held = heldEvents.rowsIn(trx);
  if (held) held.set(String(held.size).padStart(10, '0'), row);
  else await trx.executeQuery(insertEvent(trx, row.id, row.project_id, row.type, row.data, row.created, row.chain));
  await wake(trx, EVENTS_READY);
  return id;
}
