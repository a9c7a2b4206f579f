import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { newId } from '../../ids.js';
import { notify } from '../notify.js';

export type EventType = 'media.created' | 'media.updated' | 'media.deleted' | 'file.created' | 'file.deleted' | 'task.created' | 'task.completed' | 'task.failed' | 'task.cancelled'
  | 'automation.created' | 'automation.updated' | 'automation.deleted' | 'automation.skipped';

export const EVENT_TYPES: readonly EventType[] = [
  'media.created', 'media.updated', 'media.deleted', 'file.created', 'file.deleted', 'task.created', 'task.completed', 'task.failed', 'task.cancelled',
  'automation.created', 'automation.updated', 'automation.deleted', 'automation.skipped',
];

/**
 * The automations whose runs led to a task or an event, oldest first; empty when a client's
 * request did. Automations never fire on an event whose chain holds them, and a chain stops
 * growing at the configured depth (services/automation-runs.ts).
 */
export type Chain = readonly string[];

export function parseChain(text: string | null): string[] {
  return text ? (JSON.parse(text) as string[]) : [];
}

export function chainText(chain: Chain | undefined): string | null {
  return chain && chain.length > 0 ? JSON.stringify(chain) : null;
}

/** Writes an outbox row in the caller's transaction, so "saved" and "announced" cannot diverge. */
export async function recordEvent(trx: Kysely<Database>, projectId: string, type: EventType, data: unknown, created: string, chain?: Chain): Promise<string> {
  const id = newId('event');
  await trx.insertInto('events').values({ id, project_id: projectId, type, data: JSON.stringify(data), created, chain: chainText(chain) }).execute();
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
  chain: string | null;
}

/** How an automation's work caused an event: the last automation, the whole chain, its length. */
export interface EventCause {
  automation_id: string;
  chain: string[];
  depth: number;
}

/** The event as the API and webhook bodies show it: {id, object, type, data, cause?, created}. */
export function toEventObject(row: Pick<EventRow, 'id' | 'type' | 'data' | 'created' | 'chain'>) {
  const chain = parseChain(row.chain);
  const cause: EventCause | undefined = chain.length > 0 ? { automation_id: chain.at(-1)!, chain, depth: chain.length } : undefined;
  return { id: row.id, object: 'event' as const, type: row.type, data: JSON.parse(row.data) as Record<string, unknown>, ...(cause ? { cause } : {}), created: row.created };
}
export type EventObject = ReturnType<typeof toEventObject>;
