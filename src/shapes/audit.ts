import type { AuditLogTable } from '../db/schema.js';

// An audit record as the API shows it.

export function toAuditObject(r: AuditLogTable) {
  return {
    id: r.id,
    object: 'audit_record' as const,
    org_id: r.org_id ?? undefined,
    project_id: r.project_id ?? undefined,
    action: r.action,
    actor: { type: r.actor_type, id: r.actor_id ?? undefined },
    target: r.target_type ? { type: r.target_type, id: r.target_id ?? undefined } : undefined,
    details: JSON.parse(r.details) as Record<string, unknown>,
    ip: r.ip ?? undefined,
    created: r.created,
  };
}
export type AuditObject = ReturnType<typeof toAuditObject>;
