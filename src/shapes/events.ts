import type { EventsTable } from '../db/schema.js';

/**
 * How automations led to a task or an event: the automations whose runs did, oldest first (empty
 * when a client's request did), and the event that started it all (`root`: a client's upload, a
 * task it made…). Automations never fire on an event whose chain holds them, a chain stops growing
 * at the configured depth, and all the work one root causes through automations has a budget
 * (services/media/automation-runs.ts).
 */
export interface Chain {
  readonly automations: readonly string[];
  /** The event whose automation runs began the chain (absent in chains an earlier mediad stored). */
  readonly root?: string;
}

export const NO_CHAIN: Chain = { automations: [] };

export function parseChain(text: string | null): Chain {
  if (!text) return NO_CHAIN;
  const parsed = JSON.parse(text) as Chain | string[];
  // An earlier mediad stored the automations alone.
  return Array.isArray(parsed) ? { automations: parsed } : parsed;
}

export function chainText(chain: Chain | undefined): string | null {
  return chain && chain.automations.length > 0 ? JSON.stringify(chain) : null;
}

/** How an automation's work caused an event: the last automation, the whole chain, its length, and its root event. */
export interface EventCause {
  automation_id: string;
  chain: string[];
  depth: number;
  root_event_id?: string;
}

/** The event as the API and webhook bodies show it: {id, object, type, data, cause?, created}. */
export function toEventObject(row: Pick<EventsTable, 'id' | 'type' | 'data' | 'created' | 'chain'>) {
  const { automations, root } = parseChain(row.chain);
  const cause: EventCause | undefined =
    automations.length > 0
      ? {
          automation_id: automations.at(-1)!,
          chain: [...automations],
          depth: automations.length,
          ...(root ? { root_event_id: root } : {}),
        }
      : undefined;
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
