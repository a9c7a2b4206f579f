import { createHmac, randomBytes } from 'node:crypto';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import { AppError } from '../../errors.js';
import type { ImageUrlSettingsTable } from '../../db/schema.js';
import { previousSecretExpires, signingSecrets } from '../../webhooks/secrets.js';
import { recordAudit, type AuditScope } from '../audit.js';

// A project's image-URL key (imk_…) signs its image URLs: HMAC-SHA256 over the path after the
// signature, base64url without padding. It is made on first use, revealed to owners and admins
// (the secrets family), and rotated with the webhook secrets' 24-hour overlap. Stored sealed.

export const newImageUrlKey = (): string => `imk_${randomBytes(32).toString('base64url')}`;

/** The signature of `signedPath` (the URL path after the signature segment, starting with '/'). */
export function signImagePath(key: string, signedPath: string): string {
  return createHmac('sha256', key).update(signedPath).digest('base64url');
}

type KeyDeps = Pick<Deps, 'db' | 'clock' | 'secrets'>;

/** The project's settings row, made (with a new key) when it has none yet. */
export async function imageUrlSettings(deps: KeyDeps, projectId: string): Promise<ImageUrlSettingsTable> {
  const row = await deps.db
    .selectFrom('image_url_settings')
    .selectAll()
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  if (row) return row;
  const now = iso(deps.clock.now());
  await deps.db
    .insertInto('image_url_settings')
    .values({
      project_id: projectId,
      key: deps.secrets.seal(newImageUrlKey(), projectId),
      key_previous: null,
      key_rotated: null,
      key_created: now,
      allow_unsigned_presets: 0,
      updated: now,
    })
    .onConflict((oc) => oc.column('project_id').doNothing())
    .execute();
  return deps.db
    .selectFrom('image_url_settings')
    .selectAll()
    .where('project_id', '=', projectId)
    .executeTakeFirstOrThrow();
}

/**
 * Every image request checks its signature with the project's settings row: kept in memory for a
 * few seconds (changed in this process: forgotten at once; in another one: seen within the TTL —
 * a rotated key keeps verifying for 24 hours anyway, so only a new key or a changed
 * allow_unsigned_presets waits that long on the other processes).
 */
const SETTINGS_TTL_MS = 5_000;
const settingsCache = new WeakMap<object, Map<string, { row: ImageUrlSettingsTable; at: number }>>();

/** The project's settings row as read at most SETTINGS_TTL_MS ago, or undefined when it has none yet. */
export async function recentImageUrlSettings(
  deps: Pick<Deps, 'db'>,
  projectId: string,
): Promise<ImageUrlSettingsTable | undefined> {
  let map = settingsCache.get(deps.db);
  if (!map) settingsCache.set(deps.db, (map = new Map()));
  const now = Date.now();
  const hit = map.get(projectId);
  if (hit && now - hit.at < SETTINGS_TTL_MS) return hit.row;
  const row = await deps.db
    .selectFrom('image_url_settings')
    .selectAll()
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  if (row) {
    if (map.size > 10_000) map.clear();
    map.set(projectId, { row, at: now });
  }
  return row;
}

/** Forgets the project's settings row kept in memory (they were just changed). */
export function forgetSettings(deps: Pick<Deps, 'db'>, projectId: string): void {
  settingsCache.get(deps.db)?.delete(projectId);
}

// Revealing is an AES-GCM open: cheap, but every image request needs it, so the plain keys of
// sealed values seen are kept (a rotated key is a new sealed value).
const revealed = new Map<string, string>();

function reveal(deps: Pick<Deps, 'secrets'>, sealed: string, projectId: string): string {
  let plain = revealed.get(sealed);
  if (plain === undefined) {
    plain = deps.secrets.reveal(sealed, projectId);
    if (revealed.size > 10_000) revealed.clear();
    revealed.set(sealed, plain);
  }
  return plain;
}

/** The keys that verify signatures now: the current one, and the previous one during the overlap. */
export function verifyingKeys(deps: Pick<Deps, 'secrets' | 'clock'>, row: ImageUrlSettingsTable): string[] {
  return signingSecrets(
    { current: row.key, previous: row.key_previous, rotated: row.key_rotated },
    deps.clock.now(),
  ).map((sealed) => reveal(deps, sealed, row.project_id));
}

export function currentKey(deps: Pick<Deps, 'secrets'>, row: ImageUrlSettingsTable): string {
  return reveal(deps, row.key, row.project_id);
}

export interface ImageUrlKeyObject {
  object: 'image_url_key';
  /** The key's first characters (to tell keys apart), never the key. */
  prefix: string;
  created: string;
  previous_key_expires: string | null;
  /** Only in the answers of reveal and rotate. */
  key?: string;
}

function keyObject(deps: KeyDeps, row: ImageUrlSettingsTable, withKey: boolean): ImageUrlKeyObject {
  const key = currentKey(deps, row);
  return {
    object: 'image_url_key',
    prefix: `${key.slice(0, 8)}…`,
    created: row.key_rotated ?? row.key_created,
    previous_key_expires: previousSecretExpires(
      { previous: row.key_previous, rotated: row.key_rotated },
      deps.clock.now(),
    ),
    ...(withKey ? { key } : {}),
  };
}

export async function getImageUrlKey(deps: KeyDeps, projectId: string, withKey: boolean) {
  return keyObject(deps, await imageUrlSettings(deps, projectId), withKey);
}

export async function revealImageUrlKey(deps: KeyDeps, projectId: string, audit: AuditScope) {
  const row = await imageUrlSettings(deps, projectId);
  await recordAudit(
    deps.db,
    { ...audit, action: 'project.image_url_key_revealed', target: { type: 'project', id: projectId } },
    iso(deps.clock.now()),
  );
  return keyObject(deps, row, true);
}

/** A new key; the old one keeps verifying for 24 hours. */
export async function rotateImageUrlKey(deps: KeyDeps, projectId: string, audit: AuditScope) {
  const row = await imageUrlSettings(deps, projectId);
  const now = iso(deps.clock.now());
  await deps.db
    .updateTable('image_url_settings')
    .set({
      key: deps.secrets.seal(newImageUrlKey(), projectId),
      key_previous: row.key,
      key_rotated: now,
      updated: now,
    })
    .where('project_id', '=', projectId)
    .execute();
  forgetSettings(deps, projectId);
  await recordAudit(
    deps.db,
    { ...audit, action: 'project.image_url_key_rotated', target: { type: 'project', id: projectId } },
    now,
  );
  return keyObject(deps, await imageUrlSettings(deps, projectId), true);
}

export function unknownProject(): AppError {
  return new AppError('not_found', 'no image at this address');
}
