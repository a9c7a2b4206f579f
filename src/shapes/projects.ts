import type { ProjectsTable } from '../db/schema.js';
import { asApiVersion } from '../versions.js';

// The project and its webhook secret as the API shows them.

export function toProjectObject(row: ProjectsTable) {
  return {
    id: row.id,
    object: 'project' as const,
    org_id: row.org_id,
    name: row.name,
    require_signed_delivery: row.require_signed_delivery === 1,
    api_version: asApiVersion(row.api_version),
    created: row.created,
  };
}

/** `previousSecretExpires` comes from the overlap rule (webhooks/secrets.ts). */
export function toSecretObject(row: ProjectsTable, previousSecretExpires: string | null) {
  return {
    object: 'webhook_secret' as const,
    secret: row.webhook_secret,
    previous_secret_expires: previousSecretExpires ?? undefined,
  };
}
