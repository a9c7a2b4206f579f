import type { Kysely } from 'kysely';
import { newId } from '../ids.js';
import type { Database, TasksTable } from '../db/schema.js';
import { wake } from '../db/transact.js';
import { toTaskObject } from '../shapes/tasks.js';
import { WEBHOOK_READY } from '../signals.js';

/** Queues the POST to a task's webhook_url, in the transaction that ends the task. */
export async function enqueueTaskWebhook(
  trx: Kysely<Database>,
  row: TasksTable,
  type: string,
  now: string,
): Promise<void> {
  if (!row.webhook_url) return;
  await trx
    .insertInto('webhook_deliveries')
    .values({
      id: newId('delivery'),
      project_id: row.project_id,
      task_id: row.id,
      url: row.webhook_url,
      event_type: type,
      payload: JSON.stringify(toTaskObject(row)),
      status: 'pending',
      attempts: 0,
      next_attempt: now,
      lease_expires: null,
      created: now,
      updated: now,
      endpoint_id: null,
      event_id: null,
    })
    .execute();
  await wake(trx, WEBHOOK_READY);
}
