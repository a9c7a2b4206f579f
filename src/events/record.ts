import type { Kysely } from 'kysely';
import { compiledTemplate } from '../db/compiled.js';
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
  await trx.executeQuery(insertEvent(trx, id, projectId, type, JSON.stringify(data), created, chainText(chain)));
  await wake(trx, EVENTS_READY);
  return id;
}
