// The event dispatch (events/dispatcher.ts): an event that finds it idle is dispatched at once; a
// stream of commits is dispatched a few events a pass (passes start PASS_GAP_MS apart), and a
// consumer's oncePerPass read is made once per pass and project, not once per event. An event of a
// project with no automation and no webhook endpoint is recorded as dispatched: no pass takes it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Kysely } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import type { Database } from '../../src/db/schema.js';
import { transact } from '../../src/db/transact.js';
import type { Deps } from '../../src/deps.js';
import { EventDispatcher, oncePerPass, type EventConsumer } from '../../src/events/dispatcher.js';
import { recordEvent } from '../../src/events/record.js';
import { createEndpoint } from '../../src/services/media/webhook-endpoints.js';
import { createKey } from '../../src/services/people/keys.js';
import { memoryDeps } from '../helpers/memory-deps.js';

let db: Db;
let close: () => Promise<void>;
let deps: Deps;
/** A project with a webhook endpoint (its events are the dispatcher's), and one with neither endpoint nor automation. */
let watched: string;
let quiet: string;
before(async () => {
  ({ db, close, deps } = await memoryDeps({ fetch: { allowPrivate: false, allowHosts: [] } }));
  ({ project_id: watched } = await createKey(deps, 'unit', 'watched'));
  ({ project_id: quiet } = await createKey(deps, 'unit', 'quiet'));
  await createEndpoint(
    deps,
    { projectId: watched },
    { url: 'https://a.example.com/h', events: ['task.completed'] },
    { orgId: 'org_unit', projectId: watched, actor: { type: 'anonymous', id: null, ip: null } },
  );
});
after(() => close());

const passes = new Set<Kysely<Database>>();
const seen: string[] = [];
let reads = 0;
const projectRead = oncePerPass(async (_trx, projectId) => {
  reads++;
  return projectId;
});
const consumer: EventConsumer = async (_deps, trx, event) => {
  passes.add(trx);
  assert.equal(await projectRead(trx, event.project_id), event.project_id);
  seen.push(event.id);
};

async function until(ok: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !ok(); await new Promise((r) => setTimeout(r, 5)))
    if (Date.now() > deadline) throw new Error('not dispatched');
}

test('one event is dispatched on its commit; a stream of commits a few events a pass, each project read once a pass', async () => {
  // A poll of a minute: what is dispatched here was woken by the commits.
  const dispatcher = new EventDispatcher(deps, [consumer], 60_000);
  dispatcher.start();
  try {
    await new Promise((r) => setTimeout(r, 20)); // the start's first pass, on an empty outbox
    const record = (projectId = watched) =>
      transact(db, (trx) => recordEvent(trx, projectId, 'media.created', {}, new Date().toISOString()));
    const first = await record();
    await until(() => seen.includes(first));
    assert.equal(passes.size, 1);
    assert.equal(reads, 1);

    passes.clear();
    reads = 0;
    const ids: string[] = [];
    // A commit every millisecond or two: without the gap between passes, about a pass each.
    for (let i = 0; i < 20; i++) {
      ids.push(await record());
      await new Promise((r) => setTimeout(r, 1));
    }
    await until(() => ids.every((id) => seen.includes(id)));
    assert.ok(passes.size <= 12, `20 commits in ${passes.size} passes`);
    assert.equal(reads, passes.size, 'the project read once in each pass');

    // Nothing would act on the quiet project's event: recorded dispatched, it is in no pass.
    const unseen = await record(quiet);
    const flag = async (id: string) =>
      (await db.selectFrom('events').select('dispatched').where('id', '=', id).executeTakeFirstOrThrow()).dispatched;
    assert.equal(await flag(unseen), 1);
    assert.equal(await flag(first), 1, 'the watched project’s event, once its pass has committed');
    const next = await record();
    await until(() => seen.includes(next));
    assert.ok(!seen.includes(unseen));
  } finally {
    await dispatcher.stop();
  }
});
