import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import { AppError, type ErrorDetail } from '../../errors.js';
import { newId } from '../../ids.js';
import type { AutomationsTable } from '../../db/schema.js';
import { bumpCounter } from '../../db/queries/counters.js';
import { readCounter } from '../../db/hot-reads.js';
import { listPage, mapPage, type Page, type PageRequest } from '../../db/paginate.js';
import { transact } from '../../db/transact.js';
import { EVENT_TYPES, recordEvent } from '../../events/record.js';
import { kindEntry, stepChecks } from '../../kinds/registry.js';
import { toAutomationObject, type AutomationObject } from '../../shapes/automations.js';
import { validateConditions } from '../../workflows/conditions.js';
import { validateWorkflow } from '../../workflows/steps.js';
import { sealWorkflow } from './secrets.js';
import { refuseWithoutEngines } from './tasks.js';

type Scope = { projectId: string };

/** A trigger as sent: checked here (kind, event, conditions) before it is stored. */
export interface TriggerInput {
  kind: string;
  event: string;
  conditions?: unknown[];
}

/** An automation as sent; the workflow tree is checked here, each step with its kind's schema. */
export interface AutomationInput {
  name?: string | null;
  description?: string | null;
  trigger?: TriggerInput;
  workflow?: unknown[];
  status?: 'active' | 'paused';
}

/** The whole definition is checked now, so a bad step never waits for its first event to fail. */
function check(input: AutomationInput): void {
  const problems: ErrorDetail[] = [];
  if (input.trigger) {
    if (input.trigger.kind !== 'event') problems.push({ field: 'trigger.kind', message: 'must be "event"' });
    if (!(EVENT_TYPES as readonly string[]).includes(input.trigger.event))
      problems.push({ field: 'trigger.event', message: `must be one of ${EVENT_TYPES.join(', ')}` });
    if (input.trigger.conditions !== undefined)
      problems.push(...validateConditions(input.trigger.conditions, 'trigger.conditions'));
  }
  if (input.workflow !== undefined) problems.push(...validateWorkflow(input.workflow, stepChecks));
  if (problems.length > 0) {
    throw new AppError(
      'validation_failed',
      `the automation is not valid: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`,
      { details: problems },
    );
  }
}

const notFound = (id: string) => new AppError('not_found', `no automation ${id} in this project`);

export async function createAutomation(
  deps: Deps,
  scope: Scope,
  input: AutomationInput & { trigger: TriggerInput; workflow: unknown[] },
): Promise<AutomationObject> {
  check(input);
  // A step whose kind cannot run here (prompt without a chat model) is refused like POST /tasks.
  if (input.workflow !== undefined)
    await refuseWithoutEngines(deps, kindEntry('workflow')!, { workflow: input.workflow });
  return transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    const row: AutomationsTable = {
      id: newId('automation'),
      project_id: scope.projectId,
      name: input.name ?? null,
      description: input.description ?? null,
      trigger: JSON.stringify(input.trigger),
      workflow: JSON.stringify(sealWorkflow(deps, scope.projectId, input.workflow)),
      status: input.status ?? 'active',
      created: now,
      updated: now,
    };
    await trx.insertInto('automations').values(row).execute();
    await bumpCounter(trx, scope.projectId, 'automations', 1);
    const obj = toAutomationObject(row);
    await recordEvent(trx, scope.projectId, 'automation.created', obj, now);
    return obj;
  });
}

export async function getAutomation(deps: Deps, scope: Scope, id: string): Promise<AutomationObject> {
  const row = await deps.db
    .selectFrom('automations')
    .selectAll()
    .where('project_id', '=', scope.projectId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw notFound(id);
  return toAutomationObject(row);
}

export async function listAutomations(deps: Deps, scope: Scope, request: PageRequest): Promise<Page<AutomationObject>> {
  const page = await listPage(
    deps.db.selectFrom('automations').where('project_id', '=', scope.projectId),
    (q) => q.selectAll().orderBy('created', 'desc').orderBy('id', 'desc'),
    request,
    readCounter(deps, scope.projectId, 'automations'),
  );
  return mapPage(page, toAutomationObject);
}

/** PATCH changes what is sent; PUT (replace) sends everything, and unsent name/description become null. */
export async function updateAutomation(
  deps: Deps,
  scope: Scope,
  id: string,
  input: AutomationInput,
  replace = false,
): Promise<AutomationObject> {
  check(input);
  // A step whose kind cannot run here (prompt without a chat model) is refused like POST /tasks.
  if (input.workflow !== undefined)
    await refuseWithoutEngines(deps, kindEntry('workflow')!, { workflow: input.workflow });
  return transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    const changes: Partial<AutomationsTable> = { updated: now };
    if (input.name !== undefined || replace) changes.name = input.name ?? null;
    if (input.description !== undefined || replace) changes.description = input.description ?? null;
    if (input.trigger !== undefined) changes.trigger = JSON.stringify(input.trigger);
    if (input.workflow !== undefined) {
      // A workflow read back (header values REDACTED) and sent again keeps the values it had.
      const before = await trx
        .selectFrom('automations')
        .select('workflow')
        .where('project_id', '=', scope.projectId)
        .where('id', '=', id)
        .executeTakeFirst();
      if (!before) throw notFound(id);
      changes.workflow = JSON.stringify(
        sealWorkflow(deps, scope.projectId, input.workflow, JSON.parse(before.workflow) as unknown),
      );
    }
    if (input.status !== undefined || replace) changes.status = input.status ?? 'active';
    const res = await trx
      .updateTable('automations')
      .set(changes)
      .where('project_id', '=', scope.projectId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) throw notFound(id);
    const obj = toAutomationObject(
      await trx.selectFrom('automations').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
    );
    await recordEvent(trx, scope.projectId, 'automation.updated', obj, now);
    return obj;
  });
}

export async function deleteAutomation(deps: Deps, scope: Scope, id: string): Promise<void> {
  await transact(deps.db, async (trx) => {
    const row = await trx
      .selectFrom('automations')
      .selectAll()
      .where('project_id', '=', scope.projectId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound(id);
    await trx.deleteFrom('automations').where('id', '=', id).execute();
    await bumpCounter(trx, scope.projectId, 'automations', -1);
    await recordEvent(trx, scope.projectId, 'automation.deleted', toAutomationObject(row), iso(deps.clock.now()));
  });
}
