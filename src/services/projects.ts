import type { Deps } from '../deps.js';
import { iso } from '../deps.js';
import { AppError } from '../errors.js';
import type { ProjectsTable } from '../db/schema.js';
import { toProjectObject, toSecretObject } from '../shapes/projects.js';
import { newWebhookSecret, previousSecretExpires } from '../webhooks/secrets.js';

export async function getProjectRow(deps: Pick<Deps, 'db'>, projectId: string): Promise<ProjectsTable> {
  const row = await deps.db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirst();
  if (!row) throw new AppError('not_found', 'no such project');
  return row;
}

export async function getProject(deps: Pick<Deps, 'db'>, projectId: string) {
  return toProjectObject(await getProjectRow(deps, projectId));
}

export async function updateProject(
  deps: Pick<Deps, 'db'>,
  projectId: string,
  patch: { require_signed_delivery?: boolean },
) {
  if (patch.require_signed_delivery !== undefined) {
    await deps.db
      .updateTable('projects')
      .set({ require_signed_delivery: patch.require_signed_delivery ? 1 : 0 })
      .where('id', '=', projectId)
      .execute();
  }
  return getProject(deps, projectId);
}

/** The secret that signs the project's task webhooks, and when the previous one stops signing. */
export async function getWebhookSecret(deps: Pick<Deps, 'db' | 'clock'>, projectId: string) {
  const row = await getProjectRow(deps, projectId);
  return toSecretObject(
    row,
    previousSecretExpires(
      { previous: row.webhook_secret_previous, rotated: row.webhook_secret_rotated },
      deps.clock.now(),
    ),
  );
}

export async function rotateWebhookSecret(deps: Pick<Deps, 'db' | 'clock'>, projectId: string) {
  const row = await getProjectRow(deps, projectId);
  await deps.db
    .updateTable('projects')
    .set({
      webhook_secret: newWebhookSecret(),
      webhook_secret_previous: row.webhook_secret,
      webhook_secret_rotated: iso(deps.clock.now()),
    })
    .where('id', '=', projectId)
    .execute();
  return getWebhookSecret(deps, projectId);
}
