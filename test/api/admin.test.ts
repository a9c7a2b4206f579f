import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fixture } from '../helpers/fixtures.js';
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

// Administration: organisations and projects (create, rename, delete with typed confirmation,
// the background purge), members and roles (the last owner), invitations (the round trip, every
// refusal, expiry). Each refusal is checked for its status and code.

const ENV = {
  MEDIAD_SIGN_IN_PER_MINUTE: '1000',
  MEDIAD_SIGN_IN_PER_MINUTE_PER_ADDRESS: '1000',
  // The purge waits a lease after a deletion: a short one keeps the test short.
  MEDIAD_WORKER_LEASE_SECONDS: '1',
};

function refused(res: { status: number; json: any; text: string }, status: number, code: string): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.json.error.code, code, res.text);
}

describe('administration: organisations, projects, members, invitations', () => {
  let t: TestServer;
  let ada: Owner;
  let bob: { session: Session; userId: string }; // admin
  let carol: { session: Session; userId: string }; // member
  let dave: { session: Session; userId: string }; // viewer
  let otherOrg: string;

  before(async () => {
    t = await startTestServer(ENV);
    ada = await setUpOwner(t);
    bob = await invite(t, ada.session, ada.orgId, 'bob@example.com', 'admin');
    carol = await invite(t, ada.session, ada.orgId, 'carol@example.com', 'member');
    dave = await invite(t, ada.session, ada.orgId, 'dave@example.com', 'viewer');
  });
  after(() => t.stop());

  it('invited people are members with their role and sign in with their password', async () => {
    const members = await t.call('GET', `/orgs/${ada.orgId}/members`, { headers: as(t, carol.session) });
    assert.equal(members.status, 200, members.text);
    assert.deepEqual(
      members.json.data.map((m: any) => [m.email, m.role]),
      [
        ['ada@example.com', 'owner'],
        ['bob@example.com', 'admin'],
        ['carol@example.com', 'member'],
        ['dave@example.com', 'viewer'],
      ],
    );
    const s = await signIn(t, 'carol@example.com');
    const session = await t.call('GET', '/auth/session', { headers: as(t, s) });
    assert.equal(session.json.data.memberships[0].role, 'member');
    assert.equal(session.json.data.memberships[0].org.id, ada.orgId);
  });

  it('instance administrators create organisations; others may not', async () => {
    refused(await t.call('POST', '/orgs', write(t, bob.session, { name: 'Bobs' })), 403, 'insufficient_role');
    const made = await t.call('POST', '/orgs', write(t, ada.session, { name: 'Beta' }));
    assert.equal(made.status, 201, made.text);
    assert.equal(made.json.data.role, 'owner');
    assert.match(made.json.data.id, /^org_/);
    otherOrg = made.json.data.id;
    refused(await t.call('POST', '/orgs', write(t, ada.session, { name: 'Beta' })), 409, 'conflict');
    refused(await t.call('POST', '/orgs', { body: { name: 'X' }, headers: as(t, ada.session) }), 403, 'csrf_failed');
    const orgs = await t.call('GET', '/orgs', { headers: as(t, ada.session) });
    assert.deepEqual(
      orgs.json.data.map((o: any) => o.name),
      ['Acme', 'Beta'],
    );
  });

  it("another organisation's id is a 404 for its non-members", async () => {
    for (const [method, path, body] of [
      ['GET', `/orgs/${otherOrg}/members`, undefined],
      ['PATCH', `/orgs/${otherOrg}`, { name: 'Mine' }],
      ['DELETE', `/orgs/${otherOrg}`, { confirm: 'Beta' }],
      ['POST', `/orgs/${otherOrg}/invitations`, { email: 'x@example.com', role: 'viewer' }],
      ['GET', `/orgs/${otherOrg}/audit`, undefined],
      ['PATCH', `/orgs/${otherOrg}/members/${ada.userId}`, { role: 'viewer' }],
    ] as const) {
      const res = await t.call(
        method,
        path,
        method === 'GET' ? { headers: as(t, bob.session) } : write(t, bob.session, body),
      );
      refused(res, 404, 'not_found');
    }
  });

  it('owners rename the organisation; admins, members and viewers may not', async () => {
    for (const s of [bob, carol, dave])
      refused(
        await t.call('PATCH', `/orgs/${ada.orgId}`, write(t, s.session, { name: 'Nope' })),
        403,
        'insufficient_role',
      );
    const res = await t.call('PATCH', `/orgs/${ada.orgId}`, write(t, ada.session, { name: 'Acme Inc' }));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.data.name, 'Acme Inc');
    refused(await t.call('PATCH', `/orgs/${ada.orgId}`, write(t, ada.session, { name: 'Beta' })), 409, 'conflict');
  });

  it('roles: admins manage admins, members and viewers; only owners make or unmake owners; the last owner stays', async () => {
    const url = (u: string) => `/orgs/${ada.orgId}/members/${u}`;
    refused(
      await t.call('PATCH', url(dave.userId), write(t, carol.session, { role: 'member' })),
      403,
      'insufficient_role',
    );
    refused(
      await t.call('PATCH', url(dave.userId), write(t, dave.session, { role: 'admin' })),
      403,
      'insufficient_role',
    );
    const changed = await t.call('PATCH', url(dave.userId), write(t, bob.session, { role: 'member' }));
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.json.data.role, 'member');
    refused(
      await t.call('PATCH', url(dave.userId), write(t, bob.session, { role: 'owner' })),
      403,
      'insufficient_role',
    );
    refused(await t.call('PATCH', url(ada.userId), write(t, bob.session, { role: 'admin' })), 403, 'insufficient_role');
    refused(await t.call('DELETE', url(ada.userId), write(t, bob.session)), 403, 'insufficient_role');
    refused(await t.call('PATCH', url(ada.userId), write(t, ada.session, { role: 'admin' })), 409, 'last_owner');
    refused(await t.call('DELETE', url(ada.userId), write(t, ada.session)), 409, 'last_owner');
    refused(
      await t.call('PATCH', url('usr_nobody000000000'), write(t, ada.session, { role: 'admin' })),
      404,
      'not_found',
    );
    refused(await t.call('PATCH', url(dave.userId), write(t, ada.session, { role: 'boss' })), 400, 'validation_failed');

    // A second owner: now the first may step down, and the second is the last.
    assert.equal((await t.call('PATCH', url(bob.userId), write(t, ada.session, { role: 'owner' }))).status, 200);
    assert.equal((await t.call('PATCH', url(ada.userId), write(t, ada.session, { role: 'admin' }))).status, 200);
    refused(await t.call('DELETE', url(bob.userId), write(t, bob.session)), 409, 'last_owner');
    assert.equal((await t.call('PATCH', url(ada.userId), write(t, bob.session, { role: 'owner' }))).status, 200);
    assert.equal((await t.call('PATCH', url(bob.userId), write(t, ada.session, { role: 'admin' }))).status, 200);

    // Members leave on their own; admins remove members; a removed member's session no longer reaches the org.
    refused(await t.call('DELETE', url(bob.userId), write(t, dave.session)), 403, 'insufficient_role');
    assert.equal((await t.call('DELETE', url(dave.userId), write(t, dave.session))).status, 200);
    refused(await t.call('GET', `/orgs/${ada.orgId}/members`, { headers: as(t, dave.session) }), 404, 'not_found');
    refused(
      await t.call('GET', '/media', { headers: as(t, dave.session, { project: ada.projectId }) }),
      404,
      'not_found',
    );
  });

  it('invitations: who may invite, the list, revocation, and each refusal of a link', async () => {
    const base = `/orgs/${ada.orgId}/invitations`;
    refused(
      await t.call('POST', base, write(t, carol.session, { email: 'e@example.com', role: 'viewer' })),
      403,
      'insufficient_role',
    );
    refused(
      await t.call('POST', base, write(t, bob.session, { email: 'e@example.com', role: 'owner' })),
      403,
      'insufficient_role',
    );
    refused(
      await t.call('POST', base, write(t, bob.session, { email: 'carol@example.com', role: 'viewer' })),
      409,
      'conflict',
    );
    refused(await t.call('GET', base, { headers: as(t, carol.session) }), 403, 'insufficient_role');

    const made = await t.call('POST', base, write(t, bob.session, { email: 'Erin@Example.com', role: 'viewer' }));
    assert.equal(made.status, 201, made.text);
    const inv = made.json.data;
    assert.match(inv.id, /^inv_/);
    assert.equal(inv.email, 'erin@example.com');
    assert.equal(inv.status, 'pending');
    const hours = (Date.parse(inv.expires) - Date.parse(inv.created)) / 3600_000;
    assert.equal(Math.round(hours), 72, 'valid MEDIAD_INVITATION_HOURS, 72 by default');
    const token = tokenOf(inv.url);

    const list = await t.call('GET', base, { headers: as(t, bob.session) });
    assert.equal(list.status, 200);
    const listed = list.json.data.find((i: any) => i.id === inv.id);
    assert.equal(listed.status, 'pending');
    assert.equal(listed.url, undefined, 'the link is shown once');
    assert.ok(!list.text.includes(token), 'no token in the list');

    // Without name and password a new account cannot be made; from another site nothing happens.
    const bare = await t.call('POST', '/auth/accept-invitation', { body: { token } });
    refused(bare, 400, 'validation_failed');
    assert.deepEqual(bare.json.error.details.map((d: any) => d.field).sort(), ['name', 'password']);
    refused(
      await t.call('POST', '/auth/accept-invitation', {
        body: { token, name: 'Erin', password: PASSWORD },
        headers: { origin: 'https://evil.example' },
      }),
      403,
      'csrf_failed',
    );
    refused(
      await t.call('POST', '/auth/accept-invitation', {
        body: { token: 'x'.repeat(43), name: 'E', password: PASSWORD },
      }),
      404,
      'not_found',
    );

    // Revoked: the link stops working.
    assert.equal((await t.call('DELETE', `${base}/${inv.id}`, write(t, bob.session))).status, 200);
    refused(
      await t.call('POST', '/auth/accept-invitation', { body: { token, name: 'Erin', password: PASSWORD } }),
      410,
      'invitation_revoked',
    );
    const revoked = (await t.call('GET', base, { headers: as(t, ada.session) })).json.data.find(
      (i: any) => i.id === inv.id,
    );
    assert.equal(revoked.status, 'revoked');

    // Used: a second acceptance is refused.
    const again = await t.call('POST', base, write(t, ada.session, { email: 'erin@example.com', role: 'viewer' }));
    const token2 = tokenOf(again.json.data.url);
    const ok = await t.call('POST', '/auth/accept-invitation', {
      body: { token: token2, name: 'Erin', password: PASSWORD },
    });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.data.user.email, 'erin@example.com');
    refused(
      await t.call('POST', '/auth/accept-invitation', { body: { token: token2, name: 'Erin', password: PASSWORD } }),
      409,
      'invitation_used',
    );
    refused(await t.call('DELETE', `${base}/${again.json.data.id}`, write(t, ada.session)), 409, 'invitation_used');
  });

  it('an existing user accepts with their session (matching email only); without one they must sign in', async () => {
    const beta = `/orgs/${otherOrg}/invitations`;
    const inv = await t.call('POST', beta, write(t, ada.session, { email: 'carol@example.com', role: 'admin' }));
    const token = tokenOf(inv.json.data.url);
    refused(
      await t.call('POST', '/auth/accept-invitation', { body: { token, name: 'C', password: PASSWORD } }),
      409,
      'conflict',
    );
    refused(
      await t.call('POST', '/auth/accept-invitation', { body: { token }, ...write(t, bob.session) }),
      409,
      'conflict',
    );
    refused(
      await t.call('POST', '/auth/accept-invitation', { body: { token }, headers: as(t, carol.session) }),
      403,
      'csrf_failed',
    );
    const res = await t.call('POST', '/auth/accept-invitation', { body: { token }, ...write(t, carol.session) });
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.headers['set-cookie'], 'the session carries on');
    assert.deepEqual(
      res.json.data.memberships.map((m: any) => [m.org.name, m.role]),
      [
        ['Acme Inc', 'member'],
        ['Beta', 'admin'],
      ],
    );
  });

  it('projects: owners and admins rename and delete (typed confirmation); the project is gone at once and purged', async () => {
    const made = await t.call('POST', `/orgs/${ada.orgId}/projects`, write(t, ada.session, { name: 'Temp' }));
    assert.equal(made.status, 201, made.text);
    const projectId = made.json.data.id;
    const url = `/orgs/${ada.orgId}/projects/${projectId}`;
    refused(await t.call('PATCH', url, write(t, carol.session, { name: 'X' })), 403, 'insufficient_role');
    refused(await t.call('PATCH', url, write(t, ada.session, { name: 'Web' })), 409, 'conflict');
    const renamed = await t.call('PATCH', url, write(t, bob.session, { name: 'Scratch' }));
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.json.data.name, 'Scratch');
    refused(
      await t.call('PATCH', `/orgs/${otherOrg}/projects/${projectId}`, write(t, ada.session, { name: 'Y' })),
      404,
      'not_found',
    );

    // Data in it: a key, an uploaded file (a blob), a task.
    const keyRes = await t.call('POST', '/keys', write(t, ada.session, { name: 'ci' }, projectId));
    assert.equal(keyRes.status, 201, keyRes.text);
    const key = keyRes.json.data.key;
    const png = await fs.readFile(await fixture('image-png'));
    const up = await t.call('PUT', `/d/${projectId}/a/blue.png`, {
      raw: png,
      key,
      headers: { 'content-type': 'image/png' },
    });
    assert.equal(up.status, 201, up.text);
    const db = t.server.runtime.deps.db;
    const file = await db
      .selectFrom('files')
      .select(['blob_key'])
      .where('id', '=', up.json.data.id)
      .executeTakeFirstOrThrow();
    assert.ok(await t.server.runtime.deps.blobs.stat(file.blob_key), 'the blob is stored');
    const task = await t.call('POST', '/tasks', { key, body: { kind: 'image', file_id: up.json.data.id, width: 16 } });
    assert.equal(task.status, 201, task.text);

    refused(await t.call('DELETE', url, write(t, carol.session, { confirm: 'Scratch' })), 403, 'insufficient_role');
    refused(await t.call('DELETE', url, write(t, ada.session)), 400, 'confirmation_required');
    refused(await t.call('DELETE', url, write(t, ada.session, { confirm: 'scratch' })), 400, 'confirmation_required');
    assert.equal((await t.call('GET', '/files', { key })).status, 200, 'nothing happened');
    const del = await t.call('DELETE', url, write(t, bob.session, { confirm: 'Scratch' }));
    assert.equal(del.status, 200, del.text);
    assert.equal(del.json.data.deleted, true);

    // Gone at once: its key, its place in lists, a session naming it.
    refused(await t.call('GET', '/files', { key }), 401, 'unauthorized');
    const projects = await t.call('GET', `/orgs/${ada.orgId}/projects`, { headers: as(t, ada.session) });
    assert.ok(!projects.json.data.some((p: any) => p.id === projectId), 'not listed');
    refused(await t.call('GET', '/media', { headers: as(t, ada.session, { project: projectId }) }), 404, 'not_found');
    refused(await t.call('DELETE', url, write(t, ada.session, { confirm: 'Scratch' })), 404, 'not_found');
    const session = await t.call('GET', '/auth/session', { headers: as(t, ada.session) });
    assert.ok(!JSON.stringify(session.json.data.memberships).includes(projectId), 'not in memberships');

    // Purged in the background: rows, the blob (through the journal), then the project.
    const deadline = Date.now() + 20_000;
    while (
      (await db.selectFrom('projects').select('id').where('id', '=', projectId).executeTakeFirst()) &&
      Date.now() < deadline
    )
      await sleep(100);
    assert.equal(
      await db.selectFrom('projects').select('id').where('id', '=', projectId).executeTakeFirst(),
      undefined,
    );
    for (const table of ['files', 'media', 'tasks', 'events', 'api_keys'] as const) {
      const left = await db.selectFrom(table).select('project_id').where('project_id', '=', projectId).execute();
      assert.equal(left.length, 0, `${table} emptied`);
    }
    assert.equal(await t.server.runtime.deps.blobs.stat(file.blob_key), null, 'the blob is deleted');
    assert.equal((await db.selectFrom('blob_journal').selectAll().execute()).length, 0, 'the journal is settled');
    assert.equal((await t.call('GET', '/files', { key: ada.key })).status, 200, 'the other project is untouched');
  });

  it("a deleted project's name is free at once, for a new project and a rename, before the purge", async () => {
    const make = (name: string) => t.call('POST', `/orgs/${ada.orgId}/projects`, write(t, ada.session, { name }));
    const remove = (id: string, name: string) =>
      t.call('DELETE', `/orgs/${ada.orgId}/projects/${id}`, write(t, ada.session, { confirm: name }));
    const first = (await make('Reuse')).json.data;
    assert.equal((await remove(first.id, 'Reuse')).status, 200);
    // The purge waits out a grace (the worker lease) first: the deleted row is still there.
    const db = t.server.runtime.deps.db;
    assert.ok(await db.selectFrom('projects').select('id').where('id', '=', first.id).executeTakeFirst());
    const again = await make('Reuse');
    assert.equal(again.status, 201, again.text);
    assert.notEqual(again.json.data.id, first.id);
    const other = (await make('Reuse-b')).json.data;
    assert.equal((await remove(other.id, 'Reuse-b')).status, 200);
    const renamed = await t.call(
      'PATCH',
      `/orgs/${ada.orgId}/projects/${again.json.data.id}`,
      write(t, ada.session, { name: 'Reuse-b' }),
    );
    assert.equal(renamed.status, 200, renamed.text);
    refused(await make('Reuse-b'), 409, 'conflict');
  });

  it('organisations: owners delete with the exact name; it disappears at once, its name is free, its rows are purged', async () => {
    const p = await t.call('POST', `/orgs/${otherOrg}/projects`, write(t, ada.session, { name: 'Site' }));
    const keyRes = await t.call('POST', '/keys', write(t, ada.session, {}, p.json.data.id));
    const key = keyRes.json.data.key;
    refused(
      await t.call('DELETE', `/orgs/${otherOrg}`, write(t, carol.session, { confirm: 'Beta' })),
      403,
      'insufficient_role',
    );
    refused(
      await t.call('DELETE', `/orgs/${otherOrg}`, write(t, ada.session, { confirm: 'beta' })),
      400,
      'confirmation_required',
    );
    const del = await t.call('DELETE', `/orgs/${otherOrg}`, write(t, ada.session, { confirm: 'Beta' }));
    assert.equal(del.status, 200, del.text);
    refused(await t.call('GET', '/files', { key }), 401, 'unauthorized');
    const orgs = await t.call('GET', '/orgs', { headers: as(t, carol.session) });
    assert.deepEqual(
      orgs.json.data.map((o: any) => o.name),
      ['Acme Inc'],
    );
    refused(await t.call('GET', `/orgs/${otherOrg}/members`, { headers: as(t, ada.session) }), 404, 'not_found');
    const again = await t.call('POST', '/orgs', write(t, ada.session, { name: 'Beta' }));
    assert.equal(again.status, 201, 'the name is free again');

    const db = t.server.runtime.deps.db;
    const deadline = Date.now() + 20_000;
    while (
      (await db.selectFrom('orgs').select('id').where('id', '=', otherOrg).executeTakeFirst()) &&
      Date.now() < deadline
    )
      await sleep(100);
    assert.equal(await db.selectFrom('orgs').select('id').where('id', '=', otherOrg).executeTakeFirst(), undefined);
    assert.equal(
      (await db.selectFrom('memberships').select('user_id').where('org_id', '=', otherOrg).execute()).length,
      0,
    );
    assert.equal((await db.selectFrom('invitations').select('id').where('org_id', '=', otherOrg).execute()).length, 0);
  });
});

describe('invitations expire', () => {
  let t: TestServer;
  let ada: Owner;
  before(async () => {
    t = await startTestServer({ ...ENV, MEDIAD_INVITATION_HOURS: '0.0003' }); // about a second
    ada = await setUpOwner(t);
  });
  after(() => t.stop());

  it('an expired link is refused with invitation_expired and listed as expired', async () => {
    const made = await t.call(
      'POST',
      `/orgs/${ada.orgId}/invitations`,
      write(t, ada.session, { email: 'f@example.com', role: 'member' }),
    );
    assert.equal(made.status, 201, made.text);
    await sleep(Date.parse(made.json.data.expires) - Date.now() + 100);
    refused(
      await t.call('POST', '/auth/accept-invitation', {
        body: { token: tokenOf(made.json.data.url), name: 'F', password: PASSWORD },
      }),
      410,
      'invitation_expired',
    );
    const list = await t.call('GET', `/orgs/${ada.orgId}/invitations`, { headers: as(t, ada.session) });
    assert.equal(list.json.data[0].status, 'expired');
    const users = await t.server.runtime.deps.db.selectFrom('users').select('email').execute();
    assert.deepEqual(
      users.map((u) => u.email),
      ['ada@example.com'],
      'no account was made',
    );
  });
});
