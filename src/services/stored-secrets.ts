import type { Deps } from '../deps.js';
import { iso } from '../deps.js';
import { transact } from '../db/transact.js';
import { mayHoldSecrets, redactSnapshot } from '../secrets/secret-options.js';
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

export async function sealStoredSecrets(deps: Deps): Promise<void> {
  const { db } = deps;
  if (await db.selectFrom('data_passes').select('name').where('name', '=', PASS).executeTakeFirst()) return;
  let sealed = 0;

  for (let after = ''; ;) {
    const rows = await db
      .selectFrom('tasks')
      .select(['id', 'project_id', 'kind', 'options', 'step'])
      .where('id', '>', after)
      .where((eb) => eb.or([eb('options', 'like', LIKE_HEADERS), eb('step', 'like', LIKE_HEADERS)]))
      .orderBy('id')
      .limit(BATCH)
      .execute();
    if (rows.length === 0) break;
    await transact(db, async (trx) => {
      for (const r of rows) {
        const options = changed(r.options, sealTaskOptions(deps, r.project_id, r.kind, JSON.parse(r.options) as Json));
        const step =
          r.step && mayHoldSecrets(r.step)
            ? changed(r.step, sealSteps(deps, r.project_id, [JSON.parse(r.step)])[0])
            : null;
        if (!options && !step) continue;
        sealed++;
        await trx
          .updateTable('tasks')
          .set({ ...(options ? { options } : {}), ...(step ? { step } : {}) })
          .where('id', '=', r.id)
          .execute();
      }
    });
    after = rows.at(-1)!.id;
  }

  const automations = await db
    .selectFrom('automations')
    .select(['id', 'project_id', 'workflow'])
    .where('workflow', 'like', LIKE_HEADERS)
    .execute();
  await transact(db, async (trx) => {
    for (const a of automations) {
      const workflow = changed(a.workflow, sealSteps(deps, a.project_id, JSON.parse(a.workflow)));
      if (!workflow) continue;
      sealed++;
      await trx.updateTable('automations').set({ workflow }).where('id', '=', a.id).execute();
    }
  });

  // Copies shown to readers and sent to receivers: the values are not needed there, only gone.
  for (let after = ''; ;) {
    const rows = await db
      .selectFrom('events')
      .select(['id', 'data'])
      .where('id', '>', after)
      .where('data', 'like', LIKE_HEADERS)
      .orderBy('id')
      .limit(BATCH)
      .execute();
    if (rows.length === 0) break;
    await transact(db, async (trx) => {
      for (const r of rows) {
        const data = changed(r.data, redactSnapshot(JSON.parse(r.data)));
        if (data) await trx.updateTable('events').set({ data }).where('id', '=', r.id).execute();
      }
    });
    after = rows.at(-1)!.id;
  }
  for (let after = ''; ;) {
    const rows = await db
      .selectFrom('webhook_deliveries')
      .select(['id', 'payload'])
      .where('id', '>', after)
      .where('payload', 'like', LIKE_HEADERS)
      .orderBy('id')
      .limit(BATCH)
      .execute();
    if (rows.length === 0) break;
    await transact(db, async (trx) => {
      for (const r of rows) {
        const payload = changed(r.payload, redactSnapshot(JSON.parse(r.payload)));
        if (payload) await trx.updateTable('webhook_deliveries').set({ payload }).where('id', '=', r.id).execute();
      }
    });
    after = rows.at(-1)!.id;
  }

  await db
    .insertInto('data_passes')
    .values({ name: PASS, done: iso(deps.clock.now()) })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  if (sealed > 0) deps.log.info({ rows: sealed }, 'sealed header values stored in the clear by an earlier mediad');
}
