import type { LoggedRequest } from '../db/request-log-segments.js';

/** A recorded request with the names of who made it (looked up when read). */
export type RequestLogRow = LoggedRequest & { key_name: string | null; user_email: string | null };

/**
 * A recorded request as the API shows it. `url` is the public address of `path` (secret query
 * values already redacted when recorded): with `method` it is what "copy as curl" needs, minus
 * the caller's own credentials. Never a body or a header.
 */
export function toRequestObject(row: RequestLogRow, publicUrl: string) {
  return {
    id: row.id,
    object: 'request' as const,
    created: row.created,
    method: row.method,
    path: row.path,
    url: `${publicUrl}${row.path}`,
    route: row.route ?? undefined,
    status: row.status,
    duration_ms: Number(row.duration_ms),
    actor: row.actor,
    key: row.key_id === null ? undefined : { id: row.key_id, name: row.key_name ?? undefined },
    user: row.user_id === null ? undefined : { id: row.user_id, email: row.user_email ?? undefined },
  };
}
export type RequestObject = ReturnType<typeof toRequestObject>;
