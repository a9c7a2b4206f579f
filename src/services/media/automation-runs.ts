import type { Kysely } from 'kysely';
import { iso, type Deps } from '../../deps.js';
import { newId } from '../../ids.js';
import { compiledTemplate } from '../../db/compiled.js';
import type { Database } from '../../db/schema.js';
import { oncePerPass, type EventConsumer } from '../../events/dispatcher.js';
import { recordEvent, type EventRow } from '../../events/record.js';
import { insertPending, pendingTasks } from '../../queue/task-state.js';
import type { Trigger } from '../../shapes/automations.js';
import { parseChain } from '../../shapes/events.js';
import { FILE_COLUMNS, toFileObject, type FileRow } from '../../shapes/files.js';
import { fileSummary } from '../../shapes/tasks.js';
import { evaluate, type ConditionSubject } from '../../workflows/conditions.js';
import { conditionSubject } from '../../workflows/subject.js';
import { findMedia } from './media.js';

/** The file a run on a media works on: its original, else its first file (also what a dry run uses). */
export async function mediaInputFile(
  db: Kysely<Database>,
  projectId: string,
  mediaId: string,
): Promise<FileRow | undefined> {
  const rows = await db
    .selectFrom('files')
    .select(FILE_COLUMNS)
    .where('project_id', '=', projectId)
    .where('media_id', '=', mediaId)
    .orderBy('created')
    .execute();
  return rows.find((f) => f.ref === 'original') ?? rows[0];
}

/** Whether an automation's trigger conditions hold for a subject (none: they do). */
export function triggerHolds(trigger: Trigger, subject: ConditionSubject): boolean {
  return !trigger.conditions || evaluate(trigger.conditions, subject).continue;
}

/** The file a run works on: the media's original for media events, the file itself, or a task's output. */
async function inputFileFor(
  trx: Kysely<Database>,
  projectId: string,
  type: string,
  data: Record<string, unknown>,
): Promise<FileRow | undefined> {
  const files = trx.selectFrom('files').select(FILE_COLUMNS).where('project_id', '=', projectId);
  if (type.startsWith('media.')) return mediaInputFile(trx, projectId, String(data.id));
  if (type.startsWith('file.')) return files.where('id', '=', String(data.id)).executeTakeFirst();
  const output = data.output as { id?: string } | null | undefined;
  if (type.startsWith('task.') && output?.id) return files.where('id', '=', output.id).executeTakeFirst();
  return undefined;
}

/** Why an automation did not fire on an event it matched; recorded as an automation.skipped event. */
type SkipReason = 'chain_depth' | 'chain_budget' | 'too_many_tasks';

/**
 * An automation.skipped event, once per chain: the first skip of an automation for a reason in the
 * work of one root event is recorded, later ones only logged (ten automations at the depth limit
 * used to record one event per automation and per event, thousands for one upload). The budget's
 * stop is recorded once for the whole chain (`perAutomation: false`).
 */
async function recordSkip(
  deps: Deps,
  trx: Kysely<Database>,
  event: EventRow,
  root: string,
  automationId: string,
  reason: SkipReason,
  message: string,
  perAutomation = true,
): Promise<void> {
  const now = iso(deps.clock.now());
  const first = await trx
    .insertInto('chain_skips')
    .values({
      root,
      reason,
      automation_id: perAutomation ? automationId : '*',
      project_id: event.project_id,
      created: now,
    })
    .onConflict((oc) => oc.columns(['root', 'reason', 'automation_id']).doNothing())
    .executeTakeFirst();
  if (Number(first.numInsertedOrUpdatedRows ?? 0n) === 0) {
    deps.log.debug({ event: event.id, automation: automationId, reason, root }, 'automation skipped (recorded before)');
    return;
  }
  deps.log.warn({ event: event.id, automation: automationId, reason, root }, 'automation skipped');
  await recordEvent(
    trx,
    event.project_id,
    'automation.skipped',
    { automation_id: automationId, event_id: event.id, event_type: event.type, root_event_id: root, reason, message },
    now,
    parseChain(event.chain),
  );
}

/** Tasks a run may start: its workflow task and every step of the tree (a conditions branch not taken included). */
function runTasks(workflow: unknown): number {
  const steps = (list: unknown): number =>
    Array.isArray(list) ? list.reduce<number>((n, step: { next?: unknown }) => n + 1 + steps(step?.next), 0) : 0;
  return 1 + steps(workflow);
}

/**
 * Counts a run's tasks against its chain's budget; false (and nothing counted) when they do not
 * fit. The upsert holds the budget row until the transaction ends, so runs of one chain in other
 * processes count one after another.
 */
async function spend(
  trx: Kysely<Database>,
  root: string,
  projectId: string,
  tasks: number,
  budget: number,
  now: string,
): Promise<boolean> {
  if (tasks > budget) return false;
  const row = await trx
    .insertInto('chain_budgets')
    .values({ root, project_id: projectId, tasks, created: now })
    .onConflict((oc) =>
      oc
        .column('root')
        .doUpdateSet((eb) => ({ tasks: eb('chain_budgets.tasks', '+', tasks) }))
        .where('chain_budgets.tasks', '<=', budget - tasks),
    )
    .returning('tasks')
    .executeTakeFirst();
  return row !== undefined;
}

/** The project's active automations, compiled once (db/compiled.ts), read once per dispatch pass. */
const activeAutomations = compiledTemplate(
  (db: Kysely<Database>, projectId: string) =>
    db.selectFrom('automations').selectAll().where('project_id', '=', projectId).where('status', '=', 'active'),
  1,
);
const automationsOf = oncePerPass(
  async (trx, projectId) => (await trx.executeQuery(activeAutomations(trx, projectId))).rows,
);

/**
 * Starts a workflow task for each active automation whose trigger matches the event. The
 * automation_runs key (event, automation) makes a redelivered event a no-op.
 *
 * Loops and fan-out are cut by the event's chain (the automations whose runs caused it, and the
 * root event that began it): an automation never fires on an event its own run caused (its own
 * output file, its own tasks' events); a chain stops at `quotas.automationChainDepth`
 * automations; and all the runs one root event causes may start `quotas.automationChainTasks`
 * tasks at most. Each stop is recorded once per chain as an automation.skipped event. An
 * automation also does not start while its project has as many pending tasks as
 * `quotas.pendingTasksPerProject` allows.
 */
export const automationConsumer: EventConsumer = async (deps, trx, event) => {
  const automations = (await automationsOf(trx, event.project_id)).filter(
    (a) => (JSON.parse(a.trigger) as Trigger).event === event.type,
  );
  if (automations.length === 0) return;

  const data = JSON.parse(event.data) as Record<string, unknown>;
  const file = await inputFileFor(trx, event.project_id, event.type, data);
  if (!file) {
    deps.log.info(
      { event: event.id, type: event.type },
      'automation trigger skipped: the event has no file to work on',
    );
    return;
  }
  const { publicUrl, quotas } = deps.config;
  const media = await findMedia(trx, event.project_id, file.media_id);
  const subject = conditionSubject(publicUrl, media, file);
  const chain = parseChain(event.chain);
  const caused = chain.automations;
  // A client's event begins a chain; a chain an earlier mediad stored has no root: it begins anew here.
  const root = chain.root ?? event.id;

  for (const automation of automations) {
    const trigger = JSON.parse(automation.trigger) as Trigger;
    if (!triggerHolds(trigger, subject)) continue;
    if (caused.includes(automation.id)) {
      deps.log.debug(
        { event: event.id, automation: automation.id },
        'automation not fired on an event its own run caused',
      );
      continue;
    }
    if (caused.length >= quotas.automationChainDepth) {
      await recordSkip(
        deps,
        trx,
        event,
        root,
        automation.id,
        'chain_depth',
        `not started: ${event.id} was caused by a chain of ${caused.length} automations (${caused.join(' -> ')}), the most that may follow one another (MEDIAD_AUTOMATION_MAX_DEPTH=${quotas.automationChainDepth}); other stops of this automation in the chain of ${root} are not recorded again`,
      );
      continue;
    }
    const cap = quotas.pendingTasksPerProject;
    if (cap > 0 && (await pendingTasks(trx, event.project_id, cap)) >= cap) {
      await recordSkip(
        deps,
        trx,
        event,
        root,
        automation.id,
        'too_many_tasks',
        `not started: the project already has ${cap} pending tasks (MEDIAD_MAX_PENDING_TASKS); ${event.id} was not processed by this automation`,
      );
      continue;
    }
    const now = iso(deps.clock.now());
    const taskId = newId('task');
    const claimed = await trx
      .insertInto('automation_runs')
      .values({ event_id: event.id, automation_id: automation.id, task_id: taskId, created: now })
      .onConflict((oc) => oc.columns(['event_id', 'automation_id']).doNothing())
      .executeTakeFirst();
    if (Number(claimed.numInsertedOrUpdatedRows ?? 0n) === 0) continue;
    const workflow = JSON.parse(automation.workflow) as unknown;
    if (!(await spend(trx, root, event.project_id, runTasks(workflow), quotas.automationChainTasks, now))) {
      await trx
        .deleteFrom('automation_runs')
        .where('event_id', '=', event.id)
        .where('automation_id', '=', automation.id)
        .execute();
      await recordSkip(
        deps,
        trx,
        event,
        root,
        automation.id,
        'chain_budget',
        `not started: the automations run for ${root} (and what their work caused) have started ${quotas.automationChainTasks} tasks, the most one event may cause (MEDIAD_AUTOMATION_CHAIN_TASKS=${quotas.automationChainTasks}); no further automation runs in this chain, and this stop is recorded once`,
        false,
      );
      continue;
    }
    await insertPending(
      trx,
      {
        id: taskId,
        project_id: event.project_id,
        kind: 'workflow',
        input_file_id: file.id,
        input: JSON.stringify(fileSummary(toFileObject(publicUrl, file))),
        options: { workflow },
        automation_id: automation.id,
        chain: { root, automations: [...caused, automation.id] },
      },
      now,
    );
  }
};

/** How long a chain's budget and skips are kept: its runs have long ended by then. */
const CHAIN_DAYS = 7;

/** Removes the budgets and skips of chains older than CHAIN_DAYS (the housekeeper's timer pass). */
export async function pruneChains(deps: Pick<Deps, 'db' | 'clock'>): Promise<number> {
  const before = iso(new Date(deps.clock.now().getTime() - CHAIN_DAYS * 86_400_000));
  const budgets = await deps.db.deleteFrom('chain_budgets').where('created', '<', before).executeTakeFirst();
  const skips = await deps.db.deleteFrom('chain_skips').where('created', '<', before).executeTakeFirst();
  return Number(budgets.numDeletedRows) + Number(skips.numDeletedRows);
}
