import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { CountedResource } from '../hot-reads.js';
import { lastWrite } from '../transact.js';

export type { CountedResource };

interface Delta {
  projectId: string;
  resource: CountedResource;
  delta: number;
}

/** The deltas a transact transaction gathered, upserted at its end (db/transact.ts: a project's counter is a row every insert shares). */
const held = new WeakMap<Kysely<Database>, Map<string, Delta>>();

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

/** Adjusts a project's exact row count; call inside the transaction that inserts or deletes. */
export async function bumpCounter(
  trx: Kysely<Database>,
  projectId: string,
  resource: CountedResource,
  delta: number,
): Promise<void> {
  let deltas = held.get(trx);
  if (!deltas) {
    const gathered = new Map<string, Delta>();
    // Sorted: concurrent transactions lock the rows in one order.
    const write = {
      query: (t: Kysely<Database>) =>
        upsert(
          t,
          [...gathered.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, d]) => d),
        ),
    };
    if (lastWrite(trx, 'counters', write)) held.set(trx, (deltas = gathered));
  }
  if (!deltas) {
    await upsert(trx, [{ projectId, resource, delta }]).execute();
    return;
  }
  const key = `${projectId} ${resource}`;
  const d = deltas.get(key);
  if (d) d.delta += delta;
  else deltas.set(key, { projectId, resource, delta });
}
