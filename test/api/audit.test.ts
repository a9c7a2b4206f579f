import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { iso } from '../../src/deps.js';
import { AUDIT_ACTIONS, pruneAudit } from '../../src/services/audit.js';
import {
  as,
  invite,
  PASSWORD,
  setUpOwner,
  signIn,
  tokenOf,
  write,
  type Owner,
  type Session,
} from '../helpers/people.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// The audit log: a record for every action listed, in the transaction of the change (a refused or
// failed change leaves none), no secrets in any record, the filters and pages of GET
// /orgs/{id}/audit, who may read it, and its retention.

describe('audit log', () => {
  let t: TestServer;
  let ada: Owner;
  let bob: { session: Session; userId: string };
  let viewer: { session: Session; userId: string };
  /** Every secret the test sees: none may appear in any record. */
  const secrets: string[] = [];

  const count = async () =>
    Number(
      (
        await t.server.runtime.deps.db
          .selectFrom('audit_log')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const records = async (query = '', s: Session = ada.session, org = ada.orgId) => {
    const res = await t.call('GET', `/orgs/${org}/audit${query}`, { headers: as(t, s) });
    assert.equal(res.status, 200, res.text);
    return res;
  };
  const actions = async () => (await records('?limit=100')).json.data.map((r: any) => r.action);

  before(async () => {
    t = await startTestServer({
      MEDIAD_SIGN_IN_PER_MINUTE: '1000',
      MEDIAD_SIGN_IN_PER_MINUTE_PER_ADDRESS: '1000',
      MEDIAD_WORKER_LEASE_SECONDS: '1',
      MEDIAD_AUDIT_DAYS: '30',
    });
    ada = await setUpOwner(t);
    secrets.push(ada.key, ada.session.cookie.split('=')[1]!, ada.session.csrf, PASSWORD);
    bob = await invite(t, ada.session, ada.orgId, 'bob@example.com', 'admin');
    viewer = await invite(t, ada.session, ada.orgId, 'vic@example.com', 'viewer');
    secrets.push(bob.session.cookie.split('=')[1]!, viewer.session.cookie.split('=')[1]!);
  });
  after(() => t.stop());

  it('records setup, sign-in success and failure (the email tried, never the password), sign-out', async () => {
    const setup = (await records('?action=auth.setup')).json.data;
    assert.equal(setup.length, 1);
    assert.deepEqual(setup[0].actor, { type: 'user', id: ada.userId });
    assert.equal(setup[0].project_id, ada.projectId);
    assert.equal(setup[0].ip, '127.0.0.1');

    const s = await signIn(t, 'bob@example.com');
    secrets.push(s.cookie.split('=')[1]!, s.csrf);
    const wrong = await t.call('POST', '/auth/sign-in', {
      body: { email: 'bob@example.com', password: 'not-his-password' },
    });
    assert.equal(wrong.status, 401);
    secrets.push('not-his-password');
    const unknown = await t.call('POST', '/auth/sign-in', {
      body: { email: 'mallory@example.com', password: 'guess-guess' },
    });
    assert.equal(unknown.status, 401);
    secrets.push('guess-guess');
    assert.equal((await t.call('POST', '/auth/sign-out', { headers: as(t, s, { write: true }) })).status, 200);

    const signIns = (await records(`?action=auth.sign_in&actor=${bob.userId}`)).json.data;
    assert.equal(signIns.length, 1);
    assert.equal(signIns[0].details.email, 'bob@example.com');
    assert.equal(signIns[0].target.type, 'session');
    const failed = (await records('?action=auth.sign_in_failed')).json.data;
    assert.equal(failed.length, 1, 'the known email’s failure is in its organisation');
    assert.deepEqual(failed[0].details, { email: 'bob@example.com', reason: 'wrong_password', method: 'password' });
    assert.deepEqual(failed[0].actor, { type: 'anonymous' });
    assert.equal(failed[0].target.id, bob.userId);
    // An unknown email belongs to no organisation: instance administrators see it in GET /audit.
    const all = await t.call('GET', '/audit?action=auth.sign_in_failed', { headers: as(t, ada.session) });
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(all.json.data.map((r: any) => r.details.email).sort(), ['bob@example.com', 'mallory@example.com']);
    assert.equal(all.json.data.find((r: any) => r.details.email === 'mallory@example.com').org_id, undefined);
    const refusedAll = await t.call('GET', '/audit', { headers: as(t, bob.session) });
    assert.equal(refusedAll.status, 403);
    assert.equal(refusedAll.json.error.code, 'insufficient_role');
    const out = (await records(`?action=auth.sign_out&actor=${bob.userId}`)).json.data;
    assert.equal(out.length, 1);
  });

  it('records key changes by a session and by a key, project settings, secrets rotated, password changes', async () => {
    const created = await t.call(
      'POST',
      '/keys',
      write(t, ada.session, { name: 'ci', scopes: ['files:read'] }, ada.projectId),
    );
    assert.equal(created.status, 201, created.text);
    secrets.push(created.json.data.key);
    const id = created.json.data.id;
    await t.call('PATCH', `/keys/${id}`, write(t, ada.session, { name: 'deploy', paused: true }, ada.projectId));
    await t.call('PATCH', `/keys/${id}`, { key: ada.key, body: { paused: false } });
    await t.call('DELETE', `/keys/${id}`, { key: ada.key });
    const keyRecords = (await records(`?limit=10`)).json.data.filter((r: any) => r.target?.id === id);
    assert.deepEqual(keyRecords.map((r: any) => r.action).sort(), [
      'key.created',
      'key.paused',
      'key.renamed',
      'key.resumed',
      'key.revoked',
    ]);
    const byKey = keyRecords.find((r: any) => r.action === 'key.revoked');
    const firstKeyId = (await t.call('GET', '/keys', { key: ada.key })).json.data.find(
      (k: any) => k.name === 'First key',
    ).id;
    assert.deepEqual(byKey.actor, { type: 'key', id: firstKeyId });
    const renamed = keyRecords.find((r: any) => r.action === 'key.renamed');
    assert.deepEqual([renamed.details.from, renamed.details.name], ['ci', 'deploy']);
    assert.deepEqual(keyRecords.find((r: any) => r.action === 'key.created').details.scopes, ['files:read']);

    assert.equal(
      (await t.call('PATCH', '/project', { key: ada.key, body: { require_signed_delivery: true } })).status,
      200,
    );
    const settings = (await records('?action=project.settings_changed')).json.data[0];
    assert.deepEqual(settings.details, { require_signed_delivery: { from: false, to: true } });
    const rotated = await t.call('POST', '/project/webhook-secret/rotate', { key: ada.key });
    secrets.push(rotated.json.data.secret);
    // Image URLs (issue 24): the image-URL key revealed and rotated.
    secrets.push((await t.call('POST', '/project/image-url-key/reveal', { key: ada.key })).json.data.key);
    secrets.push((await t.call('POST', '/project/image-url-key/rotate', { key: ada.key })).json.data.key);
    const hook = await t.call('POST', '/webhooks', {
      key: ada.key,
      body: { url: 'https://example.com/hook', events: ['*'] },
    });
    assert.equal(hook.status, 201, hook.text);
    secrets.push(hook.json.data.secret);
    const hookRotated = await t.call('POST', `/webhooks/${hook.json.data.id}/rotate-secret`, { key: ada.key });
    secrets.push(hookRotated.json.data.secret);
    const hookPath = `/webhooks/${hook.json.data.id}`;
    const edited = await t.call('PATCH', hookPath, { key: ada.key, body: { events: ['task.completed'] } });
    assert.equal(edited.status, 200, edited.text);
    assert.equal((await t.call('DELETE', hookPath, { key: ada.key })).status, 200);
    for (const action of ['pause', 'resume'])
      assert.equal((await t.call('POST', `/queue/kinds/http/${action}`, { key: ada.key })).status, 200);

    const pw = await t.call('POST', '/account/password', {
      ...write(t, viewer.session, { current_password: PASSWORD, new_password: 'another long password' }),
    });
    assert.equal(pw.status, 200, pw.text);
    secrets.push('another long password');
    const seen = await actions();
    for (const a of [
      'project.webhook_secret_rotated',
      'webhook.created',
      'webhook.updated',
      'webhook.deleted',
      'webhook.secret_rotated',
      'queue.kind_paused',
      'queue.kind_resumed',
      'account.password_changed',
    ])
      assert.ok(seen.includes(a), a);
    const change = (await records('?action=webhook.updated')).json.data[0];
    assert.deepEqual(change.details.events, ['task.completed'], 'the change is in the record');
  });

  it('records members, invitations, organisations and projects: every action listed has a record', async () => {
    const inv = await t.call(
      'POST',
      `/orgs/${ada.orgId}/invitations`,
      write(t, ada.session, { email: 'x@example.com', role: 'member' }),
    );
    secrets.push(tokenOf(inv.json.data.url));
    await t.call('DELETE', `/orgs/${ada.orgId}/invitations/${inv.json.data.id}`, write(t, ada.session));
    await t.call('PATCH', `/orgs/${ada.orgId}/members/${viewer.userId}`, write(t, ada.session, { role: 'member' }));
    const org = await t.call('POST', '/orgs', write(t, ada.session, { name: 'Beta' }));
    const orgId = org.json.data.id;
    await t.call('PATCH', `/orgs/${orgId}`, write(t, ada.session, { name: 'Beta 2' }));
    const p = await t.call('POST', `/orgs/${orgId}/projects`, write(t, ada.session, { name: 'One' }));
    await t.call('PATCH', `/orgs/${orgId}/projects/${p.json.data.id}`, write(t, ada.session, { name: 'Uno' }));
    assert.equal(
      (await t.call('DELETE', `/orgs/${orgId}/projects/${p.json.data.id}`, write(t, ada.session, { confirm: 'Uno' })))
        .status,
      200,
    );
    const betaActions = (await records('', ada.session, orgId)).json.data.map((r: any) => r.action);
    assert.deepEqual(
      betaActions,
      ['project.deleted', 'project.renamed', 'project.created', 'org.renamed', 'org.created'],
      'newest first',
    );
    assert.equal((await t.call('DELETE', `/orgs/${orgId}`, write(t, ada.session, { confirm: 'Beta 2' }))).status, 200);
    await t.call('DELETE', `/orgs/${ada.orgId}/members/${viewer.userId}`, write(t, bob.session));

    const every = await t.call('GET', '/audit?limit=100', { headers: as(t, ada.session) });
    const seen = new Set(every.json.data.map((r: any) => r.action));
    // user.created is a first OpenID Connect sign-in: test/api/oidc.test.ts checks it.
    const missing = AUDIT_ACTIONS.filter((a) => !seen.has(a) && a !== 'user.created');
    assert.deepEqual(missing, [], 'every action listed has a record');
    const deleted = every.json.data.find((r: any) => r.action === 'org.deleted');
    assert.deepEqual([deleted.org_id, deleted.details.name], [orgId, 'Beta 2']);
    const removed = every.json.data.find((r: any) => r.action === 'member.removed');
    assert.deepEqual(
      [removed.actor.id, removed.target.id, removed.details.role],
      [bob.userId, viewer.userId, 'member'],
    );
  });

  it('a refused or failed change leaves no record', async () => {
    assert.equal((await t.call('POST', '/orgs', write(t, ada.session, { name: 'Gamma' }))).status, 201);
    const before = await count();
    const attempts: [string, string, any][] = [
      ['PATCH', `/orgs/${ada.orgId}/members/${ada.userId}`, { role: 'viewer' }], // the last owner: 409
      ['DELETE', `/orgs/${ada.orgId}/members/${ada.userId}`, undefined], // 409
      ['DELETE', `/orgs/${ada.orgId}/projects/${ada.projectId}`, { confirm: 'nope' }], // 400
      ['DELETE', `/orgs/${ada.orgId}`, {}], // 400
      ['POST', '/orgs', { name: 'Gamma' }], // the name is taken: 409 from the database's unique index
      ['POST', `/orgs/${ada.orgId}/invitations`, { email: 'bob@example.com', role: 'viewer' }], // a member: 409
      ['PATCH', `/orgs/${ada.orgId}/members/usr_nobody000000000`, { role: 'admin' }], // 404
    ];
    for (const [method, path, body] of attempts) {
      const res = await t.call(method, path, write(t, ada.session, body));
      assert.ok(res.status >= 400 && res.status < 500, `${method} ${path}: ${res.text}`);
    }
    // Refused by role, and a key's change that fails.
    const member = await t.call('PATCH', `/orgs/${ada.orgId}`, write(t, bob.session, { name: 'Mine' }));
    assert.equal(member.status, 403);
    assert.equal(
      (await t.call('PATCH', '/keys/key_nope00000000000', { key: ada.key, body: { name: 'x' } })).status,
      404,
    );
    const revoked = (await t.call('GET', '/keys', { key: ada.key })).json.data.find((k: any) => k.revoked);
    assert.equal((await t.call('PATCH', `/keys/${revoked.id}`, { key: ada.key, body: { name: 'x' } })).status, 409);
    assert.equal(await count(), before, 'no record of any of them');
    const wrongRename = await t.call('PATCH', `/orgs/${ada.orgId}`, write(t, ada.session, { name: 'Gamma' }));
    assert.equal(wrongRename.status, 409, 'the rename fails on the unique index after its checks');
    assert.equal(await count(), before);
  });

  it('no record holds a secret: keys, passwords, session tokens, webhook secrets, invitation tokens', async () => {
    const rows = await t.server.runtime.deps.db.selectFrom('audit_log').selectAll().execute();
    assert.ok(rows.length > 30, `${rows.length} records`);
    const text = JSON.stringify(rows);
    for (const s of secrets) assert.ok(!text.includes(s), `a secret (${s.slice(0, 6)}…) in the audit log`);
    assert.ok(!/mdk_[A-Za-z0-9]{20}|whsec_|password"/.test(text), 'no key, webhook secret or password field');
  });

  it('filters by action, actor and created range; pages newest first; owners and admins only', async () => {
    const page1 = await records('?limit=5');
    assert.equal(page1.json.meta.limit, 5);
    const total = page1.json.meta.total;
    assert.ok(total > 10, `total ${total}`);
    const page2 = await records('?limit=5&page=2');
    const times = [...page1.json.data, ...page2.json.data].map((r: any) => r.created);
    assert.deepEqual(times, [...times].sort().reverse(), 'newest first across pages');
    assert.equal(new Set([...page1.json.data, ...page2.json.data].map((r: any) => r.id)).size, 10);

    const byBob = (await records(`?actor=${bob.userId}&limit=100`)).json.data;
    assert.ok(byBob.length > 0 && byBob.every((r: any) => r.actor.id === bob.userId), 'only bob’s records');
    const keys = (await records('?action=key.created')).json;
    assert.ok(
      keys.data.every((r: any) => r.action === 'key.created'),
      'only key.created',
    );
    assert.match(keys.links.next ?? keys.links.self, /action=key.created/);

    const middle = page2.json.data[0].created;
    const newer = (await records(`?created_after=${encodeURIComponent(middle)}&limit=100`)).json.data;
    assert.ok(newer.length > 0 && newer.every((r: any) => r.created >= middle), 'created_after');
    const older = (await records(`?created_before=${encodeURIComponent(middle)}&limit=100`)).json.data;
    assert.ok(
      older.every((r: any) => r.created < middle),
      'created_before',
    );
    assert.equal(newer.length + older.length, total);

    const bad = await t.call('GET', `/orgs/${ada.orgId}/audit?action=nope`, { headers: as(t, ada.session) });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'validation_failed');
    const asBob = await records('', bob.session); // an admin reads it
    assert.equal(asBob.json.meta.total, total);
    const member = await invite(t, ada.session, ada.orgId, 'mia@example.com', 'member');
    for (const s of [member.session]) {
      const res = await t.call('GET', `/orgs/${ada.orgId}/audit`, { headers: as(t, s) });
      assert.equal(res.status, 403);
      assert.equal(res.json.error.code, 'insufficient_role');
    }
    const v = await invite(t, ada.session, ada.orgId, 'val@example.com', 'viewer');
    const res = await t.call('GET', `/orgs/${ada.orgId}/audit`, { headers: as(t, v.session) });
    assert.equal(res.json.error.code, 'insufficient_role');
    const other = await t.call('GET', `/orgs/org_nope0000000000000/audit`, { headers: as(t, bob.session) });
    assert.equal(other.status, 404);
  });

  it('keeps records MEDIAD_AUDIT_DAYS and prunes older ones', async () => {
    const deps = t.server.runtime.deps;
    const old = iso(new Date(Date.now() - 31 * 86_400_000));
    const recent = iso(new Date(Date.now() - 29 * 86_400_000));
    const made: [id: string, created: string][] = [
      ['aud_old0000000000000', old],
      ['aud_recent0000000000', recent],
    ];
    for (const [id, created] of made)
      await deps.db
        .insertInto('audit_log')
        .values({
          id,
          org_id: ada.orgId,
          project_id: null,
          actor_type: 'system',
          actor_id: null,
          action: 'org.renamed',
          target_type: null,
          target_id: null,
          details: '{}',
          ip: null,
          created,
        })
        .execute();
    const before = await count();
    assert.equal(await pruneAudit(deps), 1);
    assert.equal(await count(), before - 1);
    const ids = (await deps.db.selectFrom('audit_log').select('id').where('id', 'like', 'aud_%0000').execute()).map(
      (r) => r.id,
    );
    assert.deepEqual(ids, ['aud_recent0000000000']);
  });
});
