import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { compiledOnce } from '../compiled.js';

export type CountedResource = 'files' | 'media' | 'tasks' | 'automations';

/** Adjusts a project's exact row count; call inside the transaction that inserts or deletes. */
export async function bumpCounter(trx: Kysely<Database>, projectId: string, resource: CountedResource, delta: number): Promise<void> {
  await trx.insertInto('counters')
    .values({ project_id: projectId, resource, count: delta })
    .onConflict((oc) => oc.columns(['project_id', 'resource']).doUpdateSet((eb) => ({ count: eb('counters.count', '+', delta) })))
    .execute();
}

const counterRow = compiledOnce((db, projectId: string, resource: string) =>
  db.selectFrom('counters').select('count').where('project_id', '=', projectId).where('resource', '=', resource), 2);

export async function readCounter(db: Kysely<Database>, projectId: string, resource: CountedResource): Promise<number> {
  const [row] = await counterRow(db, projectId, resource);
  return row ? Number(row.count) : 0;
}
