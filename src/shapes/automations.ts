import type { AutomationsTable } from '../db/schema.js';
import type { Condition } from './conditions.js';
import { parseRedacted } from './tasks.js';

export interface Trigger {
  kind: 'event';
  event: string;
  conditions?: Condition[];
}

export function toAutomationObject(row: AutomationsTable) {
  return {
    id: row.id,
    object: 'automation' as const,
    name: row.name ?? undefined,
    description: row.description ?? undefined,
    // Stored as validated; shown as plain JSON objects.
    trigger: JSON.parse(row.trigger) as Record<string, unknown>,
    workflow: parseRedacted<Record<string, unknown>[]>(row.workflow),
    status: row.status,
    created: row.created,
    updated: row.updated,
  };
}
export type AutomationObject = ReturnType<typeof toAutomationObject>;
