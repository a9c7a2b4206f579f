import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import { AppError } from '../../errors.js';
import type { ProjectsTable } from '../../db/schema.js';
import { toProjectObject, toSecretObject } from '../../shapes/projects.js';
import { newWebhookSecret, previousSecretExpires } from '../../webhooks/secrets.js';
import type { ApiVersion } from '../../versions.js';
import { transact } from '../../db/transact.js';
import { recordAudit, type AuditScope } from '../audit.js';
import { forgetProjectKeys } from './keys.js';

export async function getProjectRow(deps: Pick<Deps, 'db'>, projectId: string): Promise<ProjectsTable> {
  const row = await deps.db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirst();
  if (!row) throw new AppError('not_found', 'no such project');
  return row;
}

export async function getProject(deps: Pick<Deps, 'db'>, projectId: string) {
  return toProjectObject(await getProjectRow(deps, projectId));
}

export interface ProjectPatch {
  require_signed_delivery?: boolean;
  /** The API version of requests that name none. */
  api_version?: ApiVersion;
}

export async function updateProject(
  deps: Pick<Deps, 'db' | 'clock'>,
  projectId: string,
  patch: ProjectPatch,
  audit: AuditScope,
) {
  const set: Partial<ProjectsTable> = {};
  if (patch.require_signed_delivery !== undefined) set.require_signed_delivery = patch.require_signed_delivery ? 1 : 0;
  if (patch.api_version !== undefined) set.api_version = patch.api_version;
  if (Object.keys(set).length > 0) {
    await transact(deps.db, async (trx) => {
      const before = toProjectObject(await getProjectRow({ db: trx }, projectId));
      await trx.updateTable('projects').set(set).where('id', '=', projectId).execute();
      const after = toProjectObject(await getProjectRow({ db: trx }, projectId));
      const changes = Object.fromEntries(
        (['require_signed_delivery', 'api_version'] as const)
          .filter((k) => before[k] !== after[k])
          .map((k) => [k, { from: before[k], to: after[k] }]),
      );
      if (Object.keys(changes).length > 0)
        await recordAudit(
          trx,
          {
            ...audit,
            action: 'project.settings_changed',
            target: { type: 'project', id: projectId },
            details: changes,
          },
          iso(deps.clock.now()),
        );
    });
    forgetProjectKeys(projectId);
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

export async function rotateWebhookSecret(deps: Pick<Deps, 'db' | 'clock'>, projectId: string, audit: AuditScope) {
  await transact(deps.db, async (trx) => {
    const row = await getProjectRow({ db: trx }, projectId);
    const now = iso(deps.clock.now());
    await trx
      .updateTable('projects')
      .set({
        webhook_secret: newWebhookSecret(),
        webhook_secret_previous: row.webhook_secret,
        webhook_secret_rotated: now,
      })
      .where('id', '=', projectId)
      .execute();
    await recordAudit(
      trx,
      { ...audit, action: 'project.webhook_secret_rotated', target: { type: 'project', id: projectId } },
      now,
    );
  });
  return getWebhookSecret(deps, projectId);
}
