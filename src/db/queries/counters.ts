import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { CountedResource } from '../hot-reads.js';
import { heldWrite, valuesOf } from '../transact.js';

export type { CountedResource };

interface Delta {
  projectId: string;
  resource: CountedResource;
  delta: number;
}

function upsert(db: Kysely<Database>, deltas: Delta[]) {
  return db
    .insertInto('counters')
    .values(deltas.map((d) => ({ project_id: d.projectId, resource: d.resource, count: d.delta })))
    .onConflict((oc) =>
      oc
        .columns(['project_id', 'resource'])
        .doUpdateSet((eb) => ({ count: eb('counters.count', '+', eb.ref('excluded.count')) })),
    );
}

const heldDeltas = heldWrite('counters', { args: valuesOf<Delta>, build: upsert });

/**
 * Adjusts a project's exact row count; call inside the transaction that inserts or deletes (in a
 * transact transaction the deltas are added up and written at its end: db/transact.ts).
 */
export async function bumpCounter(
  trx: Kysely<Database>,
  projectId: string,
  resource: CountedResource,
  delta: number,
): Promise<void> {
  const held = heldDeltas.rowsIn(trx);
  if (!held) {
    await upsert(trx, [{ projectId, resource, delta }]).execute();
    return;
  }
  const key = `${projectId} ${resource}`;
  const d = held.get(key);
  if (d) d.delta += delta;
  else held.set(key, { projectId, resource, delta });
}
