import type { EventsTable } from '../db/schema.js';

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

/** How an automation's work caused an event: the last automation, the whole chain, its length. */
export interface EventCause {
  automation_id: string;
  chain: string[];
  depth: number;
}

/** The event as the API and webhook bodies show it: {id, object, type, data, cause?, created}. */
export function toEventObject(row: Pick<EventsTable, 'id' | 'type' | 'data' | 'created' | 'chain'>) {
  const chain = parseChain(row.chain);
  const cause: EventCause | undefined =
    chain.length > 0 ? { automation_id: chain.at(-1)!, chain, depth: chain.length } : undefined;
  return {
    id: row.id,
    object: 'event' as const,
    type: row.type,
    data: JSON.parse(row.data) as Record<string, unknown>,
    ...(cause ? { cause } : {}),
    created: row.created,
  };
}
export type EventObject = ReturnType<typeof toEventObject>;
