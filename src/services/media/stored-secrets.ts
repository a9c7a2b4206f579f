import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import { transact } from '../../db/transact.js';
import { mayHoldSecrets, redactSnapshot } from '../../secrets/secret-options.js';
import { sealSteps, sealTaskOptions } from './secrets.js';

// Before secret options were sealed (issue 20), an http step's header values were stored in the
// clear: in tasks' options and steps, automations' workflows, and the copies that events and
// webhook deliveries keep. This pass seals the first two and redacts the copies, once per
// database (data_passes), in batches so a large history does not hold the write lock for long.

const PASS = 'seal-secrets-v1';
const BATCH = 500;
const LIKE_HEADERS = '%"headers"%';

type Json = Record<string, unknown>;
const changed = (before: string, after: unknown) => {
  const text = JSON.stringify(after);
  return text === before ? null : text;
};

/**
 * Rewrites rows a batch at a time (keyset on id): `read` gives the rows after an id, `rewrite`
 * updates one in the batch's transaction and says whether it changed anything. Returns how many did.
 */
async function inBatches<R extends { id: string }>(
  db: Deps['db'],
  read: (after: string) => Promise<R[]>,
  rewrite: (trx: Deps['db'], row: R) => Promise<boolean>,
): Promise<number> {
  let count = 0;
  for (let after = ''; ;) {
    const rows = await read(after);
    if (rows.length === 0) return count;
    await transact(db, async (trx) => {
      for (const r of rows) if (await rewrite(trx, r)) count++;
    });
    after = rows.at(-1)!.id;
  }
}

export async function sealStoredSecrets(deps: Deps): Promise<void> {
  const { db } = deps;
  if (await db.selectFrom('data_passes').select('name').where('name', '=', PASS).executeTakeFirst()) return;

  const tasks = await inBatches(
    db,
    (after) =>
      db
        .selectFrom('tasks')
        .select(['id', 'project_id', 'kind', 'options', 'step'])
        .where('id', '>', after)
        .where((eb) => eb.or([eb('options', 'like', LIKE_HEADERS), eb('step', 'like', LIKE_HEADERS)]))
        .orderBy('id')
        .limit(BATCH)
        .execute(),
    async (trx, r) => {
      const options = changed(r.options, sealTaskOptions(deps, r.project_id, r.kind, JSON.parse(r.options) as Json));
      const step =
        r.step && mayHoldSecrets(r.step)
          ? changed(r.step, sealSteps(deps, r.project_id, [JSON.parse(r.step)])[0])
          : null;
      if (!options && !step) return false;
      await trx
        .updateTable('tasks')
        .set({ ...(options ? { options } : {}), ...(step ? { step } : {}) })
        .where('id', '=', r.id)
        .execute();
      return true;
    },
  );
  const automations = await inBatches(
    db,
    (after) =>
      db
        .selectFrom('automations')
        .select(['id', 'project_id', 'workflow'])
        .where('id', '>', after)
        .where('workflow', 'like', LIKE_HEADERS)
        .orderBy('id')
        .limit(BATCH)
        .execute(),
    async (trx, a) => {
      const workflow = changed(a.workflow, sealSteps(deps, a.project_id, JSON.parse(a.workflow)));
      if (workflow) await trx.updateTable('automations').set({ workflow }).where('id', '=', a.id).execute();
      return workflow !== null;
    },
  );
  // Copies shown to readers and sent to receivers: the values are not needed there, only gone.
  const copies =
    (await inBatches(
      db,
      (after) =>
        db
          .selectFrom('events')
          .select(['id', 'data'])
          .where('id', '>', after)
          .where('data', 'like', LIKE_HEADERS)
          .orderBy('id')
          .limit(BATCH)
          .execute(),
      async (trx, r) => {
        const data = changed(r.data, redactSnapshot(JSON.parse(r.data)));
        if (data) await trx.updateTable('events').set({ data }).where('id', '=', r.id).execute();
        return data !== null;
      },
    )) +
    (await inBatches(
      db,
      (after) =>
        db
          .selectFrom('webhook_deliveries')
          .select(['id', 'payload'])
          .where('id', '>', after)
          .where('payload', 'like', LIKE_HEADERS)
          .orderBy('id')
          .limit(BATCH)
          .execute(),
      async (trx, r) => {
        const payload = changed(r.payload, redactSnapshot(JSON.parse(r.payload)));
        if (payload) await trx.updateTable('webhook_deliveries').set({ payload }).where('id', '=', r.id).execute();
        return payload !== null;
      },
    ));

  await db
    .insertInto('data_passes')
    .values({ name: PASS, done: iso(deps.clock.now()) })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  if (tasks + automations + copies > 0)
    deps.log.info(
      { tasks, automations, copies },
      'header values stored in the clear by an earlier mediad sealed or redacted',
    );
}
