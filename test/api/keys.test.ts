import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

// API keys as an API resource: scopes enforced per resource family, expiry, pause and resume,
// revocation, and who may manage them.

let t: TestServer;
let full: string;

before(async () => {
  t = await startTestServer();
  ({ key: full } = await t.key('keys', 'main'));
});
after(() => t.stop());

const make = async (body: Record<string, unknown>) => {
  const res = await t.call('POST', '/keys', { key: full, body });
  assert.equal(res.status, 201, res.text);
  return res.json.data;
};

describe('/keys', () => {
  it('creates a key shown once; lists keys with their hint, never the key', async () => {
    const made = await make({ name: 'deploy', scopes: ['files:read', 'tasks:write'] });
    assert.match(made.key, /^mdk_/);
    assert.equal(made.object, 'api_key');
    assert.deepEqual(made.scopes, ['files:read', 'tasks:write']);
    assert.equal(made.hint, `${made.key.slice(0, 8)}…${made.key.slice(-4)}`);
    assert.equal(made.created_by, undefined, 'made by a key, not a person');
    const list = await t.call('GET', '/keys', { key: full });
    assert.equal(list.status, 200);
    assert.ok(!list.text.includes(made.key));
    const listed = list.json.data.find((k: any) => k.id === made.id);
    assert.equal(listed.name, 'deploy');
    assert.equal(listed.key, undefined);
    const existing = list.json.data.find((k: any) => k.scopes[0] === 'full');
    assert.ok(existing, 'keys made before scopes existed (and by the CLI) have full access');
    assert.ok(existing.last_used, 'last use is recorded');
  });

  it('refuses unknown scopes, a past expiry and unknown properties', async () => {
    for (const body of [
      { scopes: ['files:delete'] },
      { scopes: [] },
      { expires: '2001-01-01T00:00:00Z' },
      { expires: 'soon' },
      { owner: 'x' },
    ]) {
      const res = await t.call('POST', '/keys', { key: full, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.json.error.code, 'validation_failed');
    }
  });

  it('a read-only key reads its family, and gets 403 insufficient_scope for writes and other families', async () => {
    const { key } = await make({ scopes: ['files:read'] });
    assert.equal((await t.call('GET', '/files', { key })).status, 200);
    assert.equal((await t.call('GET', '/media', { key })).status, 200, 'media are of the files family');
    const write = await t.call('POST', '/media', { key, body: {} });
    assert.equal(write.status, 403);
    assert.equal(write.json.error.code, 'insufficient_scope');
    assert.match(write.json.error.message, /files:write/);
    assert.equal((await t.call('GET', '/tasks', { key })).status, 403);
    assert.equal((await t.call('GET', '/keys', { key })).status, 403, 'only full access manages keys');
    assert.equal(
      (await t.call('POST', '/signatures', { key, body: { filename: 'a.png', method: 'put' } })).status,
      403,
    );
  });

  it('write implies read; each family stands alone', async () => {
    const { key } = await make({ scopes: ['tasks:write', 'project:read'] });
    assert.equal((await t.call('GET', '/tasks', { key })).status, 200);
    assert.equal((await t.call('GET', '/tasks-config', { key })).status, 200);
    assert.equal((await t.call('GET', '/project', { key })).status, 200);
    assert.equal((await t.call('PATCH', '/project', { key, body: {} })).status, 403);
    assert.equal((await t.call('GET', '/events', { key })).status, 403);
    assert.equal((await t.call('GET', '/webhooks', { key })).status, 403);
    assert.equal((await t.call('GET', '/automations', { key })).status, 403);
  });

  it('an expired key is a 401', async () => {
    const expires = new Date(Date.now() + 1500).toISOString();
    const made = await make({ scopes: ['files:read'], expires });
    assert.equal(made.expires, expires);
    assert.equal((await t.call('GET', '/files', { key: made.key })).status, 200);
    await new Promise((r) => setTimeout(r, 1600));
    const res = await t.call('GET', '/files', { key: made.key });
    assert.equal(res.status, 401);
    assert.equal(res.json.error.code, 'unauthorized');
  });

  it('pause makes a key answer 401 until resumed; revoke is for good', async () => {
    const made = await make({ name: 'pausable' });
    const paused = await t.call('PATCH', `/keys/${made.id}`, { key: full, body: { paused: true } });
    assert.equal(paused.status, 200);
    assert.ok(paused.json.data.paused);
    assert.equal((await t.call('GET', '/files', { key: made.key })).status, 401);
    const resumed = await t.call('PATCH', `/keys/${made.id}`, { key: full, body: { paused: false, name: 'resumed' } });
    assert.equal(resumed.json.data.paused, undefined);
    assert.equal(resumed.json.data.name, 'resumed');
    assert.equal((await t.call('GET', '/files', { key: made.key })).status, 200);

    const revoked = await t.call('DELETE', `/keys/${made.id}`, { key: full });
    assert.equal(revoked.status, 200);
    assert.equal(revoked.json.data.deleted, true);
    assert.equal((await t.call('GET', '/files', { key: made.key })).status, 401);
    const change = await t.call('PATCH', `/keys/${made.id}`, { key: full, body: { paused: false } });
    assert.equal(change.status, 409);
    const listed = (await t.call('GET', '/keys', { key: full })).json.data.find((k: any) => k.id === made.id);
    assert.ok(listed.revoked);
  });

  it("another project's key is a 404", async () => {
    const other = await t.key('keys-other', 'p');
    const mine = await make({ name: 'mine' });
    assert.equal((await t.call('PATCH', `/keys/${mine.id}`, { key: other.key, body: { paused: true } })).status, 404);
    assert.equal((await t.call('DELETE', `/keys/${mine.id}`, { key: other.key })).status, 404);
    assert.equal((await t.call('GET', '/files', { key: mine.key })).status, 200);
  });
});
