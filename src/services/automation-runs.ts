import type { Kysely } from 'kysely';
import { iso, type Deps } from '../deps.js';
import { newId } from '../ids.js';
import type { Database } from '../db/schema.js';
import type { EventConsumer } from '../events/dispatcher.js';
import { recordEvent, type EventRow } from '../events/record.js';
import { insertPending, pendingTasks } from '../queue/task-state.js';
import type { Trigger } from '../shapes/automations.js';
import { parseChain } from '../shapes/events.js';
import { FILE_COLUMNS, toFileObject, type FileRow } from '../shapes/files.js';
import { fileSummary } from '../shapes/tasks.js';
import { evaluate, type ConditionSubject } from '../workflows/conditions.js';
import { conditionSubject } from '../workflows/subject.js';
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
type SkipReason = 'chain_depth' | 'too_many_tasks';

async function recordSkip(
  deps: Deps,
  trx: Kysely<Database>,
  event: EventRow,
  automationId: string,
  reason: SkipReason,
  message: string,
): Promise<void> {
  deps.log.warn({ event: event.id, automation: automationId, reason }, 'automation skipped');
  await recordEvent(
    trx,
    event.project_id,
    'automation.skipped',
    {
      automation_id: automationId,
      event_id: event.id,
      event_type: event.type,
      reason,
      message,
    },
    iso(deps.clock.now()),
    parseChain(event.chain),
  );
}

/**
 * Starts a workflow task for each active automation whose trigger matches the event. The
 * automation_runs key (event, automation) makes a redelivered event a no-op.
 *
 * Loops are cut by the event's chain (the automations whose runs caused it): an automation
 * never fires on an event its own run caused (its own output file, its own tasks' events),
 * and a chain stops at `quotas.automationChainDepth` automations, recorded as an
 * automation.skipped event. An automation also does not start while its project has as many
 * pending tasks as `quotas.pendingTasksPerProject` allows.
 */
export const automationConsumer: EventConsumer = async (deps, trx, event) => {
  const automations = (
    await trx
      .selectFrom('automations')
      .selectAll()
      .where('project_id', '=', event.project_id)
      .where('status', '=', 'active')
      .execute()
  ).filter((a) => (JSON.parse(a.trigger) as Trigger).event === event.type);
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

  for (const automation of automations) {
    const trigger = JSON.parse(automation.trigger) as Trigger;
    if (!triggerHolds(trigger, subject)) continue;
    if (chain.includes(automation.id)) {
      deps.log.debug(
        { event: event.id, automation: automation.id },
        'automation not fired on an event its own run caused',
      );
      continue;
    }
    if (chain.length >= quotas.automationChainDepth) {
      await recordSkip(
        deps,
        trx,
        event,
        automation.id,
        'chain_depth',
        `not started: ${event.id} was caused by a chain of ${chain.length} automations (${chain.join(' -> ')}), the most that may follow one another (MEDIAD_AUTOMATION_MAX_DEPTH=${quotas.automationChainDepth})`,
      );
      continue;
    }
    const cap = quotas.pendingTasksPerProject;
    if (cap > 0 && (await pendingTasks(trx, event.project_id, cap)) >= cap) {
      await recordSkip(
        deps,
        trx,
        event,
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
    await insertPending(
      trx,
      {
        id: taskId,
        project_id: event.project_id,
        kind: 'workflow',
        input_file_id: file.id,
        input: JSON.stringify(fileSummary(toFileObject(publicUrl, file))),
        options: { workflow: JSON.parse(automation.workflow) },
        automation_id: automation.id,
        chain: [...chain, automation.id],
      },
      now,
    );
  }
};
