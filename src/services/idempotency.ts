import type { Deps } from '../deps.js';
import { iso } from '../deps.js';
import { AppError } from '../errors.js';

// SPEC 4.9: a POST with an Idempotency-Key is processed once. The row is claimed
// with an insert that only one request can win (the primary key decides, on either
// database), so concurrent duplicates never both run.

export const KEY_TTL_MS = 24 * 3600 * 1000;
/** A claim older than this whose request never answered (a crash) may be taken over. */
const STALE_CLAIM_MS = 2 * 3600 * 1000;

export type Claim = { kind: 'proceed' } | { kind: 'replay'; status: number; body: string };

export function checkKeyFormat(key: string): void {
  if (key.length < 16 || key.length > 32 || !/^[\x21-\x7e]+$/.test(key)) {
    throw new AppError(
      'idempotency_key_invalid',
      'Idempotency-Key must be 16 to 32 printable characters without spaces (a UUID without dashes fits)',
      {
        details: [{ field: 'headers.idempotency-key', message: 'must be 16 to 32 printable characters' }],
      },
    );
  }
}

export async function claimKey(
  deps: Pick<Deps, 'db' | 'clock'>,
  projectId: string,
  key: string,
  fingerprint: string,
): Promise<Claim> {
  const now = deps.clock.now();
  await deps.db
    .deleteFrom('idempotency_keys')
    .where('project_id', '=', projectId)
    .where('key', '=', key)
    .where('expires', '<', iso(now))
    .execute();
  const inserted = await deps.db
    .insertInto('idempotency_keys')
    .values({
      project_id: projectId,
      key,
      fingerprint,
      state: 'running',
      status_code: null,
      response_body: null,
      created: iso(now),
      expires: iso(new Date(now.getTime() + KEY_TTL_MS)),
    })
    .onConflict((oc) => oc.columns(['project_id', 'key']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) return { kind: 'proceed' };

  const row = await deps.db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('key', '=', key)
    .executeTakeFirst();
  if (!row) return claimKey(deps, projectId, key, fingerprint); // expired and removed meanwhile
  if (row.fingerprint !== fingerprint) {
    throw new AppError(
      'idempotency_key_reused',
      'this Idempotency-Key was already used with a different request; use a new key for a new request',
    );
  }
  if (row.state === 'done' && row.status_code !== null && row.response_body !== null) {
    return { kind: 'replay', status: row.status_code, body: row.response_body };
  }
  if (Date.parse(row.created) + STALE_CLAIM_MS < now.getTime()) {
    const took = await deps.db
      .updateTable('idempotency_keys')
      .set({ created: iso(now) })
      .where('project_id', '=', projectId)
      .where('key', '=', key)
      .where('created', '=', row.created)
      .executeTakeFirst();
    if (Number(took.numUpdatedRows) > 0) return { kind: 'proceed' };
  }
  throw new AppError(
    'idempotency_request_in_progress',
    'a request with this Idempotency-Key is still being processed; retry after it finishes to get its response',
  );
}

export async function completeKey(
  deps: Pick<Deps, 'db'>,
  projectId: string,
  key: string,
  status: number,
  body: string,
): Promise<void> {
  await deps.db
    .updateTable('idempotency_keys')
    .set({ state: 'done', status_code: status, response_body: body })
    .where('project_id', '=', projectId)
    .where('key', '=', key)
    .execute();
}

/** A server error is not remembered: the caller may retry with the same key. */
export async function releaseKey(deps: Pick<Deps, 'db'>, projectId: string, key: string): Promise<void> {
  await deps.db
    .deleteFrom('idempotency_keys')
    .where('project_id', '=', projectId)
    .where('key', '=', key)
    .where('state', '=', 'running')
    .execute();
}

export async function sweepExpiredKeys(deps: Pick<Deps, 'db' | 'clock'>): Promise<number> {
  const res = await deps.db
    .deleteFrom('idempotency_keys')
    .where('expires', '<', iso(deps.clock.now()))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
