import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { wake } from '../db/transact.js';
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
  await trx
    .insertInto('events')
    .values({ id, project_id: projectId, type, data: JSON.stringify(data), created, chain: chainText(chain) })
    .execute();
  await wake(trx, EVENTS_READY);
  return id;
}
