import type { ApiKeysTable } from '../db/schema.js';

/** An API key as the API shows it: never the key itself, which is shown once when made. */
export function toKeyObject(row: ApiKeysTable) {
  return {
    id: row.id,
    object: 'api_key' as const,
    name: row.name ?? undefined,
    hint: row.hint,
    scopes: row.scopes ? (JSON.parse(row.scopes) as string[]) : ['full'],
    expires: row.expires ?? undefined,
    paused: row.paused ?? undefined,
    created_by: row.created_by ?? undefined,
    created: row.created,
    last_used: row.last_used ?? undefined,
    revoked: row.revoked ?? undefined,
  };
}
export type KeyObject = ReturnType<typeof toKeyObject>;
