import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

// Webhook signing secrets, of a project (task webhooks) and of each endpoint, follow one rule:
// after a rotation the previous secret keeps signing beside the new one for SECRET_OVERLAP_MS,
// so receivers can switch at their pace.

export const SECRET_OVERLAP_MS = 24 * 3600_000;

export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

export interface SecretPair {
  current: string;
  previous: string | null;
  /** When `previous` was replaced (ISO), null before any rotation. */
  rotated: string | null;
}

/** When the previous secret stops signing, or null when there is none (any more). */
export function previousSecretExpires(s: Pick<SecretPair, 'previous' | 'rotated'>, now: Date): string | null {
  if (s.previous === null || s.rotated === null) return null;
  const expires = Date.parse(s.rotated) + SECRET_OVERLAP_MS;
  return expires > now.getTime() ? new Date(expires).toISOString() : null;
}

/** The secrets deliveries are signed with now: the current one, and the previous one during the overlap. */
export function signingSecrets(s: SecretPair, now: Date): string[] {
  return previousSecretExpires(s, now) !== null ? [s.current, s.previous!] : [s.current];
}

/** A project's secrets, as task webhooks are signed with them. */
export async function projectSigningSecrets(db: Kysely<Database>, projectId: string, now: Date): Promise<string[]> {
  const row = await db
    .selectFrom('projects')
    .select(['webhook_secret', 'webhook_secret_previous', 'webhook_secret_rotated'])
    .where('id', '=', projectId)
    .executeTakeFirstOrThrow();
  return signingSecrets(
    { current: row.webhook_secret, previous: row.webhook_secret_previous, rotated: row.webhook_secret_rotated },
    now,
  );
}
