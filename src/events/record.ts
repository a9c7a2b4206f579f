import type { Insertable, Kysely } from 'kysely';
import { compiledTemplate } from '../db/compiled.js';
import type { Database, EventsTable } from '../db/schema.js';
import { heldWrite, wake } from '../db/transact.js';
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
  ) => trx.insertInto('events').values({ id, project_id: projectId, type, data, created, chain }),
  6,
);

type NewEvent = Insertable<EventsTable>;

/**
 * In a transact transaction the events are inserted at its end, with its other held-back writes
 * and in one statement (db/transact.ts): on PostgreSQL a task's completion recorded two events,
 * two round trips of its transaction's nine. Keyed by their order, so they keep it (and `seq`).
 */
const heldEvents = heldWrite<NewEvent>('events', (t, entries) =>
  t.insertInto('events').values(entries.map(([, e]) => e)),
);

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
