import { createHash } from 'node:crypto';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import { newId, randomBase62 } from '../../ids.js';
import type { AuthContext } from '../access.js';
import { asApiVersion } from '../../versions.js';

// Short-lived upload tokens (mdu_…): `POST /uploads` gives one to a holder of the files write
// scope, so a browser can upload with tus (`Authorization: Bearer mdu_…`) without holding an API
// key. A token acts only on /uploads/tus, for its project, until it expires; only its SHA-256 is stored.

export const UPLOAD_TOKEN_PREFIX = 'mdu_';
export const UPLOAD_TOKEN_MAX_SECONDS = 24 * 3600;
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export async function createUploadToken(
  deps: Pick<Deps, 'db' | 'clock'>,
  projectId: string,
  seconds: number,
): Promise<{ id: string; token: string; expires: string }> {
  const token = UPLOAD_TOKEN_PREFIX + randomBase62(40);
  const now = deps.clock.now();
  const row = {
    id: newId('upload_token'),
    project_id: projectId,
    token_hash: hashToken(token),
    created: iso(now),
    expires: iso(new Date(now.getTime() + seconds * 1000)),
  };
  await deps.db.insertInto('upload_tokens').values(row).execute();
  return { id: row.id, token, expires: row.expires };
}

/**
 * Who an upload token is, or null when unknown or expired: a principal of its project with the
 * files write scope under the token's own id (so rate limits and the request log count it apart
 * from every other token). Only the /uploads/tus scope takes these tokens (app.ts).
 */
export async function authenticateUploadToken(
  deps: Pick<Deps, 'db' | 'clock'>,
  token: string,
): Promise<AuthContext | null> {
  if (!token.startsWith(UPLOAD_TOKEN_PREFIX) || token.length > 100) return null;
  const row = await deps.db
    .selectFrom('upload_tokens')
    .innerJoin('projects', 'projects.id', 'upload_tokens.project_id')
    .select([
      'upload_tokens.id as tokenId',
      'upload_tokens.project_id as projectId',
      'projects.org_id as orgId',
      'projects.api_version',
      'expires',
    ])
    .where('upload_tokens.token_hash', '=', hashToken(token))
    .where('projects.deleted', 'is', null)
    .executeTakeFirst();
  if (!row || Date.parse(row.expires) <= deps.clock.now().getTime()) return null;
  return {
    projectId: row.projectId,
    orgId: row.orgId,
    apiVersion: asApiVersion(row.api_version),
    principal: { type: 'key', keyId: row.tokenId, scopes: ['files:write'] },
  };
}
