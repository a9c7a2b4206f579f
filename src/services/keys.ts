import { createHash } from 'node:crypto';
import type { Deps } from '../deps.js';
import { iso } from '../deps.js';
import { newId, randomBase62 } from '../ids.js';
import { newWebhookSecret } from '../webhooks/secrets.js';
import { asApiVersion, DEFAULT_VERSION, type ApiVersion } from '../versions.js';

// API keys are 256-bit random tokens, so a single SHA-256 is the right storage hash
// (slow password hashes guard low-entropy secrets; these are not).
const KEY_PREFIX = 'mdk_';

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/** Who a request is: the key's project and organisation, and the project's default API version. */
export interface AuthContext {
  orgId: string;
  projectId: string;
  keyId: string;
  apiVersion: ApiVersion;
}

export interface CreatedKey {
  key: string;
  key_id: string;
  org_id: string;
  project_id: string;
}

/** Creates org and project when missing, then a key for the project. The key is returned once. */
export async function createKey(
  deps: Pick<Deps, 'db' | 'clock'>,
  orgName: string,
  projectName: string,
  name?: string,
  opts: { apiVersion?: ApiVersion } = {},
): Promise<CreatedKey> {
  const now = iso(deps.clock.now());
  return deps.db.transaction().execute(async (trx) => {
    let org = await trx.selectFrom('orgs').select('id').where('name', '=', orgName).executeTakeFirst();
    if (!org) {
      org = { id: newId('org') };
      await trx.insertInto('orgs').values({ id: org.id, name: orgName, created: now }).execute();
    }
    let project = await trx
      .selectFrom('projects')
      .select('id')
      .where('org_id', '=', org.id)
      .where('name', '=', projectName)
      .executeTakeFirst();
    if (!project) {
      project = { id: newId('project') };
      await trx
        .insertInto('projects')
        .values({
          id: project.id,
          org_id: org.id,
          name: projectName,
          signing_secret: randomBase62(43),
          webhook_secret: newWebhookSecret(),
          webhook_secret_previous: null,
          webhook_secret_rotated: null,
          require_signed_delivery: 0,
          api_version: opts.apiVersion ?? DEFAULT_VERSION,
          created: now,
        })
        .execute();
    }
    const key = KEY_PREFIX + randomBase62(43);
    const keyId = newId('key');
    await trx
      .insertInto('api_keys')
      .values({
        id: keyId,
        project_id: project.id,
        key_hash: hashKey(key),
        hint: `${key.slice(0, 8)}…${key.slice(-4)}`,
        name: name ?? null,
        created: now,
        last_used: null,
        revoked: null,
      })
      .execute();
    return { key, key_id: keyId, org_id: org.id, project_id: project.id };
  });
}

export interface KeyListing {
  key_id: string;
  hint: string;
  name: string | null;
  org: string;
  project: string;
  project_id: string;
  created: string;
  last_used: string | null;
  revoked: string | null;
}

export async function listKeys(deps: Pick<Deps, 'db'>): Promise<KeyListing[]> {
  return deps.db
    .selectFrom('api_keys')
    .innerJoin('projects', 'projects.id', 'api_keys.project_id')
    .innerJoin('orgs', 'orgs.id', 'projects.org_id')
    .select([
      'api_keys.id as key_id',
      'api_keys.hint',
      'api_keys.name',
      'orgs.name as org',
      'projects.name as project',
      'projects.id as project_id',
      'api_keys.created',
      'api_keys.last_used',
      'api_keys.revoked',
    ])
    .orderBy('api_keys.created')
    .execute();
}

/** Revokes by key id; returns false when no such active key exists. */
export async function revokeKey(deps: Pick<Deps, 'db' | 'clock'>, keyId: string): Promise<boolean> {
  const res = await deps.db
    .updateTable('api_keys')
    .set({ revoked: iso(deps.clock.now()) })
    .where('id', '=', keyId)
    .where('revoked', 'is', null)
    .executeTakeFirst();
  for (const [token, entry] of authCache) if (entry.auth.keyId === keyId) authCache.delete(token);
  return Number(res.numUpdatedRows) > 0;
}

const LAST_USED_EVERY_MS = 60_000;
const lastUsedWritten = new Map<string, number>();

/**
 * Recently verified keys, by the token as sent. Every request would otherwise cost a query
 * and a hash; the price is that a key revoked by another process (the CLI) keeps working for
 * up to AUTH_CACHE_MS. Revocations in this process apply at once. Tokens live only in this
 * process's memory, as each request's header does; only hashes are ever stored.
 */
const AUTH_CACHE_MS = 2_000;
const AUTH_CACHE_SIZE = 10_000;
const authCache = new Map<string, { auth: AuthContext; until: number }>();

/** Resolves a bearer token to its project, or null. Records last use at most once a minute per key. */
export async function authenticate(deps: Pick<Deps, 'db' | 'clock'>, token: string): Promise<AuthContext | null> {
  if (!token.startsWith(KEY_PREFIX) || token.length > 100) return null;
  const cached = authCache.get(token);
  if (cached && cached.until > Date.now()) return cached.auth;
  const hash = hashKey(token);
  const row = await deps.db
    .selectFrom('api_keys')
    .innerJoin('projects', 'projects.id', 'api_keys.project_id')
    .select([
      'api_keys.id as keyId',
      'api_keys.project_id as projectId',
      'projects.org_id as orgId',
      'projects.api_version',
    ])
    .where('api_keys.key_hash', '=', hash)
    .where('api_keys.revoked', 'is', null)
    .executeTakeFirst();
  if (!row) return null;
  const auth: AuthContext = {
    keyId: row.keyId,
    projectId: row.projectId,
    orgId: row.orgId,
    apiVersion: asApiVersion(row.api_version),
  };
  if (authCache.size >= AUTH_CACHE_SIZE) authCache.clear();
  authCache.set(token, { auth, until: Date.now() + AUTH_CACHE_MS });
  const now = deps.clock.now();
  if ((lastUsedWritten.get(row.keyId) ?? 0) + LAST_USED_EVERY_MS < now.getTime()) {
    lastUsedWritten.set(row.keyId, now.getTime());
    await deps.db
      .updateTable('api_keys')
      .set({ last_used: iso(now) })
      .where('id', '=', row.keyId)
      .execute();
  }
  return auth;
}

/** Forgets this process's verified keys of a project whose settings changed (other processes follow within AUTH_CACHE_MS). */
export function forgetProjectKeys(projectId: string): void {
  for (const [token, entry] of authCache) if (entry.auth.projectId === projectId) authCache.delete(token);
}
