import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import type { ApiKeysTable, Database } from '../../db/schema.js';
import { listPage, mapPage, type Page, type PageRequest } from '../../db/paginate.js';
import { transact } from '../../db/transact.js';
import { AppError } from '../../errors.js';
import { newId, randomBase62 } from '../../ids.js';
import { toKeyObject, type KeyObject } from '../../shapes/keys.js';
import { asApiVersion, type ApiVersion } from '../../versions.js';
import { isScope, type AuthContext, type Scope } from '../access.js';
import { recordAudit, type AuditScope } from '../audit.js';
import { ensureProject } from './orgs.js';

// API keys are 256-bit random tokens, so a single SHA-256 is the right storage hash
// (slow password hashes guard low-entropy secrets; these are not). A key has scopes (full
// access unless limited), and may expire or be paused; a revoked key is gone for good.
const KEY_PREFIX = 'mdk_';

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export interface NewKey {
  name?: string | null;
  /** Omitted or ['full']: every family, key management included. */
  scopes?: string[];
  expires?: string | null;
  createdBy?: string | null;
}

/** Normalised scopes to store: null for full access. */
function scopesText(scopes: string[] | undefined): string | null {
  if (!scopes || scopes.length === 0 || scopes.includes('full')) return null;
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0) {
    throw new AppError('validation_failed', `unknown scopes: ${unknown.join(', ')}`, {
      details: unknown.map(() => ({ field: 'scopes', message: 'not a scope (full, or <family>:read|write)' })),
    });
  }
  return JSON.stringify([...new Set(scopes)].sort());
}

/** Inserts a key of the project; the key itself is returned this once. */
export async function issueKey(
  trx: Kysely<Database>,
  projectId: string,
  input: NewKey,
  now: string,
): Promise<{ row: ApiKeysTable; key: string }> {
  if (input.expires && Date.parse(input.expires) <= Date.parse(now)) {
    throw new AppError('validation_failed', 'expires must be in the future', {
      details: [{ field: 'expires', message: 'in the past' }],
    });
  }
  const key = KEY_PREFIX + randomBase62(43);
  const row: ApiKeysTable = {
    id: newId('key'),
    project_id: projectId,
    key_hash: hashKey(key),
    hint: `${key.slice(0, 8)}…${key.slice(-4)}`,
    name: input.name ?? null,
    created: now,
    last_used: null,
    revoked: null,
    scopes: scopesText(input.scopes),
    expires: input.expires ? iso(new Date(input.expires)) : null,
    paused: null,
    created_by: input.createdBy ?? null,
  };
  await trx.insertInto('api_keys').values(row).execute();
  return { row, key };
}

export interface CreatedKey {
  key: string;
  key_id: string;
  org_id: string;
  project_id: string;
}

/** The CLI's keys create: the org and project are made when missing, then a full-access key. */
export async function createKey(
  deps: Pick<Deps, 'db' | 'clock'>,
  orgName: string,
  projectName: string,
  name?: string,
  opts: { apiVersion?: ApiVersion } = {},
): Promise<CreatedKey> {
  const now = iso(deps.clock.now());
  return transact(deps.db, async (trx) => {
    const { org, project } = await ensureProject(trx, orgName, projectName, now, opts.apiVersion);
    const { row, key } = await issueKey(trx, project.id, { name }, now);
    return { key, key_id: row.id, org_id: org.id, project_id: project.id };
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

/** Every key of the instance (the CLI's keys list). */
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

/** Revokes by key id (the CLI); returns false when no such active key exists. */
export async function revokeKey(deps: Pick<Deps, 'db' | 'clock'>, keyId: string): Promise<boolean> {
  const res = await deps.db
    .updateTable('api_keys')
    .set({ revoked: iso(deps.clock.now()) })
    .where('id', '=', keyId)
    .where('revoked', 'is', null)
    .executeTakeFirst();
  forgetKey(keyId);
  return Number(res.numUpdatedRows) > 0;
}

type ProjectScope = { projectId: string };

// The project's keys as an API resource (GET/POST /keys, PATCH/DELETE /keys/{id}).

export async function listProjectKeys(
  deps: Pick<Deps, 'db'>,
  scope: ProjectScope,
  request: PageRequest,
): Promise<Page<KeyObject>> {
  const page = await listPage(
    deps.db.selectFrom('api_keys').where('project_id', '=', scope.projectId),
    (q) => q.selectAll().orderBy('created', 'desc').orderBy('id', 'desc'),
    request,
  );
  return mapPage(page, toKeyObject);
}

export async function createProjectKey(
  deps: Pick<Deps, 'db' | 'clock'>,
  scope: ProjectScope,
  input: NewKey,
  audit: AuditScope,
): Promise<KeyObject & { key: string }> {
  return transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    const { row, key } = await issueKey(trx, scope.projectId, input, now);
    await recordKeyAudit(trx, audit, 'key.created', row, now, {
      scopes: toKeyObject(row).scopes,
      ...(row.expires ? { expires: row.expires } : {}),
    });
    return { ...toKeyObject(row), key };
  });
}

function recordKeyAudit(
  trx: Kysely<Database>,
  audit: AuditScope,
  action: 'key.created' | 'key.renamed' | 'key.paused' | 'key.resumed' | 'key.revoked',
  row: ApiKeysTable,
  now: string,
  details: Record<string, unknown> = {},
): Promise<void> {
  return recordAudit(
    trx,
    {
      ...audit,
      action,
      target: { type: 'api_key', id: row.id },
      details: { name: row.name, hint: row.hint, ...details },
    },
    now,
  );
}

async function findProjectKey(db: Kysely<Database>, scope: ProjectScope, id: string): Promise<ApiKeysTable> {
  const row = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('project_id', '=', scope.projectId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw new AppError('not_found', `no API key ${id} in this project`);
  return row;
}

/** Renames, pauses (it answers 401 until resumed) or resumes a key; a revoked key cannot change. */
export async function updateProjectKey(
  deps: Pick<Deps, 'db' | 'clock'>,
  scope: ProjectScope,
  id: string,
  patch: { name?: string | null; paused?: boolean },
  audit: AuditScope,
): Promise<KeyObject> {
  const updated = await transact(deps.db, async (trx) => {
    const row = await findProjectKey(trx, scope, id);
    if (row.revoked) throw new AppError('conflict', `API key ${id} is revoked; make a new one`);
    const now = iso(deps.clock.now());
    const set: Partial<ApiKeysTable> = {};
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.paused !== undefined) set.paused = patch.paused ? (row.paused ?? now) : null;
    if (Object.keys(set).length > 0) await trx.updateTable('api_keys').set(set).where('id', '=', id).execute();
    const next = { ...row, ...set };
    if (next.name !== row.name) await recordKeyAudit(trx, audit, 'key.renamed', next, now, { from: row.name });
    if (next.paused && !row.paused) await recordKeyAudit(trx, audit, 'key.paused', next, now);
    if (!next.paused && row.paused) await recordKeyAudit(trx, audit, 'key.resumed', next, now);
    return next;
  });
  forgetKey(id);
  return toKeyObject(updated);
}

export async function revokeProjectKey(
  deps: Pick<Deps, 'db' | 'clock'>,
  scope: ProjectScope,
  id: string,
  audit: AuditScope,
): Promise<void> {
  await transact(deps.db, async (trx) => {
    const row = await findProjectKey(trx, scope, id);
    if (row.revoked) return;
    const now = iso(deps.clock.now());
    await trx.updateTable('api_keys').set({ revoked: now }).where('id', '=', id).execute();
    await recordKeyAudit(trx, audit, 'key.revoked', row, now);
  });
  forgetKey(id);
}

const LAST_USED_EVERY_MS = 60_000;
const lastUsedWritten = new Map<string, number>();

/**
 * Recently verified keys, by the token as sent. Every request would otherwise cost a query
 * and a hash; the price is that a key revoked or paused by another process (the CLI) keeps
 * working for up to AUTH_CACHE_MS. Changes in this process apply at once. Tokens live only in
 * this process's memory, as each request's header does; only hashes are ever stored.
 */
const AUTH_CACHE_MS = 2_000;
const AUTH_CACHE_SIZE = 10_000;
const authCache = new Map<string, { auth: AuthContext; until: number; expires: number }>();

function forgetKey(keyId: string): void {
  for (const [token, entry] of authCache)
    if (entry.auth.principal.type === 'key' && entry.auth.principal.keyId === keyId) authCache.delete(token);
}

/** Forgets this process's verified keys of a project whose settings changed (other processes follow within AUTH_CACHE_MS). */
export function forgetProjectKeys(projectId: string): void {
  for (const [token, entry] of authCache) if (entry.auth.projectId === projectId) authCache.delete(token);
}

/**
 * Resolves a bearer token to its project and scopes, or null (unknown, revoked, expired or
 * paused). A key verified in the last AUTH_CACHE_MS is answered at once, without a promise: the
 * API's hot reads call this on every request (http/auth.ts runs its hook synchronously then).
 */
export function authenticate(
  deps: Pick<Deps, 'db' | 'clock'>,
  token: string,
): AuthContext | null | Promise<AuthContext | null> {
  if (!token.startsWith(KEY_PREFIX) || token.length > 100) return null;
  const cached = authCache.get(token);
  if (cached && cached.until > Date.now() && cached.expires > deps.clock.now().getTime()) return cached.auth;
  return lookUpKey(deps, token);
}

/** authenticate's database side. Records last use at most once a minute per key. */
async function lookUpKey(deps: Pick<Deps, 'db' | 'clock'>, token: string): Promise<AuthContext | null> {
  const nowMs = deps.clock.now().getTime();
  const row = await deps.db
    .selectFrom('api_keys')
    .innerJoin('projects', 'projects.id', 'api_keys.project_id')
    .select([
      'api_keys.id as keyId',
      'api_keys.project_id as projectId',
      'projects.org_id as orgId',
      'projects.api_version',
      'api_keys.scopes',
      'api_keys.expires',
      'api_keys.paused',
    ])
    .where('api_keys.key_hash', '=', hashKey(token))
    .where('api_keys.revoked', 'is', null)
    .where('projects.deleted', 'is', null)
    .executeTakeFirst();
  if (!row || row.paused) return null;
  const expires = row.expires ? Date.parse(row.expires) : Infinity;
  if (expires <= nowMs) return null;
  const scopes: Scope[] = row.scopes ? (JSON.parse(row.scopes) as string[]).filter(isScope) : ['full'];
  const auth: AuthContext = {
    projectId: row.projectId,
    orgId: row.orgId,
    apiVersion: asApiVersion(row.api_version),
    principal: { type: 'key', keyId: row.keyId, scopes },
  };
  if (authCache.size >= AUTH_CACHE_SIZE) authCache.clear();
  authCache.set(token, { auth, until: Date.now() + AUTH_CACHE_MS, expires });
  if ((lastUsedWritten.get(row.keyId) ?? 0) + LAST_USED_EVERY_MS < nowMs) {
    lastUsedWritten.set(row.keyId, nowMs);
    await deps.db
      .updateTable('api_keys')
      .set({ last_used: iso(deps.clock.now()) })
      .where('id', '=', row.keyId)
      .execute();
  }
  return auth;
}
