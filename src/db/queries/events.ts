import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { newId } from '../../ids.js';
import { notify } from '../notify.js';

export type EventType = 'media.created' | 'media.updated' | 'media.deleted' | 'file.created' | 'file.deleted' | 'task.created' | 'task.completed' | 'task.failed' | 'task.cancelled'
  | 'automation.created' | 'automation.updated' | 'automation.deleted';

export const EVENT_TYPES: readonly EventType[] = [
  'media.created', 'media.updated', 'media.deleted', 'file.created', 'file.deleted', 'task.created', 'task.completed', 'task.failed', 'task.cancelled',
  'automation.created', 'automation.updated', 'automation.deleted',
];

/** Writes an outbox row in the caller's transaction, so "saved" and "announced" cannot diverge. */
export async function recordEvent(trx: Kysely<Database>, projectId: string, type: EventType, data: unknown, created: string): Promise<string> {
  const id = newId('event');
  await trx.insertInto('events').values({ id, project_id: projectId, type, data: JSON.stringify(data), created }).execute();
  // Other processes' dispatchers (and, for new tasks, workers) wake when this commits.
  await notify(trx, 'mediad_events');
  if (type === 'task.created') await notify(trx, 'mediad_tasks');
  return id;
}

export interface EventRow {
  seq: number;
  id: string;
  project_id: string;
  type: string;
  data: string;
  created: string;
}

/** The event as the API and webhook bodies show it: {id, object, type, data, created}. */
export function toEventObject(row: Pick<EventRow, 'id' | 'type' | 'data' | 'created'>) {
  return { id: row.id, object: 'event' as const, type: row.type, data: JSON.parse(row.data) as Record<string, unknown>, created: row.created };
}
export type EventObject = ReturnType<typeof toEventObject>;
