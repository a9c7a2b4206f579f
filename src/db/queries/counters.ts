import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { CountedResource } from '../hot-reads.js';

export type { CountedResource };

/** Adjusts a project's exact row count; call inside the transaction that inserts or deletes. */
export async function bumpCounter(
  trx: Kysely<Database>,
  projectId: string,
  resource: CountedResource,
  delta: number,
): Promise<void> {
  await trx
    .insertInto('counters')
    .values({ project_id: projectId, resource, count: delta })
    .onConflict((oc) =>
      oc.columns(['project_id', 'resource']).doUpdateSet((eb) => ({ count: eb('counters.count', '+', delta) })),
    )
    .execute();
}
