import type { Deps } from '../deps.js';
import { iso } from '../deps.js';
import { AppError } from '../errors.js';
import { newWebhookSecret } from './keys.js';

/** After a rotation the previous webhook secret keeps signing for this long. */
export const SECRET_OVERLAP_MS = 24 * 3600_000;

export async function getProjectRow(deps: Pick<Deps, 'db'>, projectId: string) {
  const row = await deps.db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirst();
  if (!row) throw new AppError('not_found', 'no such project');
  return row;
}

type ProjectRow = Awaited<ReturnType<typeof getProjectRow>>;

export function toProjectObject(row: ProjectRow) {
  return { id: row.id, object: 'project' as const, org_id: row.org_id, name: row.name, require_signed_delivery: row.require_signed_delivery === 1, created: row.created };
}

export async function updateProject(deps: Pick<Deps, 'db'>, projectId: string, patch: { require_signed_delivery?: boolean }) {
  if (patch.require_signed_delivery !== undefined) {
    await deps.db.updateTable('projects').set({ require_signed_delivery: patch.require_signed_delivery ? 1 : 0 }).where('id', '=', projectId).execute();
  }
  return toProjectObject(await getProjectRow(deps, projectId));
}

function previousStillValid(row: ProjectRow, now: Date): boolean {
  return row.webhook_secret_previous !== null && row.webhook_secret_rotated !== null && Date.parse(row.webhook_secret_rotated) + SECRET_OVERLAP_MS > now.getTime();
}

/** The secrets webhooks are signed with now: the current one, and the previous one during the overlap. */
export async function projectWebhookSecrets(deps: Pick<Deps, 'db' | 'clock'>, projectId: string): Promise<string[]> {
  const row = await getProjectRow(deps, projectId);
  return previousStillValid(row, deps.clock.now()) ? [row.webhook_secret, row.webhook_secret_previous!] : [row.webhook_secret];
}

export function toSecretObject(row: ProjectRow, now: Date) {
  return {
    object: 'webhook_secret' as const,
    secret: row.webhook_secret,
    previous_secret_expires: previousStillValid(row, now) ? iso(new Date(Date.parse(row.webhook_secret_rotated!) + SECRET_OVERLAP_MS)) : null,
  };
}

export async function rotateWebhookSecret(deps: Pick<Deps, 'db' | 'clock'>, projectId: string) {
  const row = await getProjectRow(deps, projectId);
  const now = deps.clock.now();
  await deps.db.updateTable('projects')
    .set({ webhook_secret: newWebhookSecret(), webhook_secret_previous: row.webhook_secret, webhook_secret_rotated: iso(now) })
    .where('id', '=', projectId).execute();
  return toSecretObject(await getProjectRow(deps, projectId), now);
}
