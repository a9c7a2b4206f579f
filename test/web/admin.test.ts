import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OIDC_SIGN_IN_ERRORS } from '../../src/errors.js';
import { axeViolations, screenshot } from '../helpers/a11y.js';
import { chromiumAvailable, guardedPage } from '../helpers/browser.js';
import { startTestServer } from '../helpers/server.js';
import { PASSWORD, setUpOwner, startWebTest, type WebTest } from '../helpers/web.js';

// The administration pages in Chromium: an owner creates, renames and deletes (typed confirmation)
// a project; invites a viewer whose link, opened in a fresh browser, makes their account and signs
// them in without write buttons; changes their role; the last owner's refusal is shown. The audit
// log shows the sign-ins and key changes the test made and filters by action in the URL. The
// sign-in page shows the OpenID Connect button and a callback error's message.

let w: WebTest;
before(async () => {
  w = await startWebTest();
});
after(() => w?.close());

/** The shell's switcher and user menu are checked by the shell's tests (see webhooks.test.ts). */

async function until(probe: () => Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}
/** The organisation routes take a session: the owner's, from setup. */
const asOwner = (method: string, url: string, body?: unknown) =>
  w.t.call(method, url, {
    headers: { cookie: w.owner.cookie, 'x-csrf-token': w.owner.csrf, origin: w.t.base },
    ...(body === undefined ? {} : { body }),
  });
const projectNames = async () =>
  (await asOwner('GET', `/orgs/${w.owner.orgId}/projects?limit=100`)).json.data.map((p: { name: string }) => p.name);

describe('the administration pages in Chromium', { skip: !chromiumAvailable() && 'no chromium' }, () => {
  it('projects, invitations, roles, typed-confirmation delete, then the audit log of it all', async () => {
    const { page } = w.page;
    const base = `${w.t.base}/app/p/${w.owner.projectId}`;
    await page.goto(`${base}/admin`);
    const projects = page.getByRole('table', { name: 'Projects' });
    await projects.getByRole('link', { name: 'Website' }).waitFor();
    assert.ok(
      await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Organisation' }).isVisible(),
    );

    // Create a project, then rename it.
    await page.getByRole('button', { name: 'New project' }).click();
    await page.getByRole('dialog').getByLabel('Name').fill('Staging');
    await page.getByRole('button', { name: 'Create project' }).click();
    await projects.getByRole('link', { name: 'Staging' }).waitFor();
    assert.deepEqual((await projectNames()).sort(), ['Staging', 'Website']);
    await page.getByRole('button', { name: 'Rename Staging' }).click();
    await page.getByRole('dialog').getByLabel('Name').fill('Staging two');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await projects.getByRole('link', { name: 'Staging two' }).waitFor();
    assert.deepEqual((await projectNames()).sort(), ['Staging two', 'Website']);

    // Invite a viewer: the link is shown once, with a copy button.
    await page.getByRole('button', { name: 'Invite someone' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Email').fill('vera@example.com');
    await dialog.getByLabel('Role').selectOption('viewer');
    await dialog.getByRole('button', { name: 'Create invitation' }).click();
    const link = (await dialog.locator('[data-secret]').textContent()) ?? '';
    assert.match(link, /^https:\/\/.+\/app\/invite#token=.+/);
    assert.ok(await dialog.getByRole('button', { name: 'Copy' }).isVisible());
    assert.deepEqual(await axeViolations(page), [], 'the invitation dialog');
    await dialog.getByRole('button', { name: 'Done' }).click();
    const invitations = page.getByRole('table', { name: 'Invitations' });
    await invitations.getByRole('cell', { name: 'vera@example.com', exact: true }).waitFor();
    const pending = (await asOwner('GET', `/orgs/${w.owner.orgId}/invitations`)).json.data;
    assert.equal(pending.length, 1);
    assert.equal(pending[0].status, 'pending');
    assert.equal(pending[0].url, undefined, 'the link is in the create answer only');

    // The invitee opens the link in a fresh browser (no session), makes an account and lands signed in.
    const invitee = await w.newPage();
    const ip = invitee.page;
    await ip.goto(link.replace(/^https:\/\/[^/]+/, w.t.base));
    await ip.getByLabel('Your name').fill('Vera Viewer');
    await ip.getByLabel('Password').fill(PASSWORD);
    assert.deepEqual(await axeViolations(ip), [], 'the invitation page');
    await screenshot(ip, 'invite');
    await ip.getByRole('button', { name: 'Create account and join' }).click();
    await ip.waitForURL(/\/app\/p\/prj_[^/]+\/overview$/);
    await ip
      .getByRole('button', { name: /Account menu/ })
      .filter({ hasText: 'Vera Viewer' })
      .waitFor();
    const nav = ip.getByRole('navigation', { name: 'Project' });
    await nav.getByRole('link', { name: 'Media' }).waitFor();
    for (const name of ['API keys', 'Settings', 'Organisation', 'Audit log'])
      assert.equal(await nav.getByRole('link', { name }).count(), 0, `no ${name} for a viewer`);
    await ip.goto(`${base}/media`);
    await ip.getByRole('heading', { name: 'Media', level: 1 }).waitFor();
    assert.equal(await ip.getByRole('button', { name: 'Add from URL' }).count(), 0, 'a viewer gets no write button');
    await page.goto(`${base}/media`);
    await page.getByRole('button', { name: 'Add from URL' }).waitFor(); // the owner does: the check can fail
    assert.deepEqual(invitee.outside, []);
    assert.deepEqual(invitee.consoleErrors, []);

    // Change the viewer's role; the last owner cannot be demoted (the refusal said plainly).
    await page.goto(`${base}/admin`);
    const members = page.getByRole('table', { name: 'Members' });
    await members.getByRole('cell', { name: 'vera@example.com', exact: true }).waitFor();
    assert.equal(await page.getByLabel('Role of Vera Viewer').inputValue(), 'viewer');
    await page.getByLabel('Role of Vera Viewer').selectOption('member');
    await until(async () => {
      const list = (await asOwner('GET', `/orgs/${w.owner.orgId}/members`)).json.data;
      return list.find((m: { email: string }) => m.email === 'vera@example.com')?.role === 'member';
    });
    await page.getByLabel('Role of Olivia Owner').selectOption('admin');
    await page.getByRole('alert').filter({ hasText: 'An organisation needs at least one owner.' }).waitFor();
    const owners = (await asOwner('GET', `/orgs/${w.owner.orgId}/members`)).json.data;
    assert.equal(owners.find((m: { email: string }) => m.email === w.owner.email)?.role, 'owner');
    await until(async () => (await page.getByLabel('Role of Olivia Owner').inputValue()) === 'owner');
    // Chromium logs the API's refusal (409): that one and no other error so far.
    assert.deepEqual(w.page.consoleErrors, [
      'Failed to load resource: the server responded with a status of 409 (Conflict)',
    ]);
    w.page.consoleErrors.length = 0;
    assert.deepEqual(await axeViolations(page), [], 'the organisation page');
    await screenshot(page, 'admin');

    // Delete the project with typed confirmation: a wrong name keeps the button disabled.
    await page.getByRole('button', { name: 'Delete Staging two' }).click();
    const confirm = page.getByRole('alertdialog');
    const del = confirm.getByRole('button', { name: 'Delete project' });
    await confirm.getByLabel(/Type Staging two to confirm/).fill('Staging');
    assert.equal(await del.isDisabled(), true, 'a wrong name keeps the button disabled');
    await confirm.getByLabel(/Type Staging two to confirm/).fill('Staging two');
    assert.equal(await del.isDisabled(), false);
    await del.click();
    // The open modal hides the table from the accessibility tree, so the row's absence counts only
    // once the dialog has closed, and it closes after the DELETE has answered.
    await confirm.waitFor({ state: 'detached' });
    await until(async () => (await projects.getByRole('link', { name: 'Staging two' }).count()) === 0);
    assert.deepEqual(await projectNames(), ['Website']);

    // Key changes and sign-ins (one failed) for the audit log.
    const key = (await w.t.call('POST', '/keys', { key: w.owner.key, body: { name: 'audit me' } })).json.data;
    assert.equal((await w.t.call('DELETE', `/keys/${key.id}`, { key: w.owner.key })).status, 200);
    const wrong = await w.t.call('POST', '/auth/sign-in', {
      body: { email: w.owner.email, password: 'not the password' },
    });
    assert.equal(wrong.status, 401);
    const signedIn = await w.t.call('POST', '/auth/sign-in', { body: { email: w.owner.email, password: PASSWORD } });
    assert.equal(signedIn.status, 200);

    const audit = (await asOwner('GET', `/orgs/${w.owner.orgId}/audit?limit=100`)).json.data;
    const actions = new Set(audit.map((r: { action: string }) => r.action));
    for (const a of [
      'auth.sign_in',
      'auth.sign_in_failed',
      'key.created',
      'key.revoked',
      'project.created',
      'project.renamed',
      'project.deleted',
      'invitation.created',
      'invitation.accepted',
      'member.role_changed',
    ])
      assert.ok(actions.has(a), `the API recorded ${a}`);

    await page.goto(`${base}/audit`);
    const table = page.getByRole('table', { name: 'Audit records' });
    await table.waitFor();
    const shown = await table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-row')));
    assert.deepEqual(
      shown,
      audit.slice(0, 50).map((r: { id: string }) => r.id),
      'the records, newest first',
    );
    const shownActions = await table.locator('tbody tr td:nth-child(2)').allTextContents();
    for (const a of ['auth.sign_in', 'auth.sign_in_failed', 'key.created', 'key.revoked', 'project.deleted'])
      assert.ok(shownActions.includes(a), `the page shows ${a}`);
    assert.deepEqual(await axeViolations(page), [], 'the audit log');
    await screenshot(page, 'audit');

    // Filter by action: kept in the URL, through a reload.
    await page.getByLabel('Action').selectOption('key.created');
    await page.waitForURL(/action=key\.created/);
    const keyCreated = audit.filter((r: { action: string }) => r.action === 'key.created');
    await until(async () => (await table.locator('tbody tr').count()) === keyCreated.length);
    assert.deepEqual(
      await table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-row'))),
      keyCreated.map((r: { id: string }) => r.id),
    );
    const keyRow = table.locator(`[data-row="${keyCreated[0].id}"]`);
    await keyRow.getByText('Details').click();
    assert.equal(JSON.parse((await keyRow.locator('pre').textContent()) ?? '{}').name, 'audit me');
    await page.reload();
    await table.waitFor();
    assert.equal(await page.getByLabel('Action').inputValue(), 'key.created');
    assert.equal(await table.locator('tbody tr').count(), keyCreated.length);

    // …and by actor: the invitee's records only.
    const vera = (await asOwner('GET', `/orgs/${w.owner.orgId}/members`)).json.data.find(
      (m: { email: string }) => m.email === 'vera@example.com',
    );
    await page.getByLabel('Action').selectOption('');
    await page.getByLabel('Actor').selectOption(vera.user_id);
    await page.waitForURL(new RegExp(`actor=${vera.user_id}`));
    const byVera = (await asOwner('GET', `/orgs/${w.owner.orgId}/audit?actor=${vera.user_id}&limit=100`)).json.data;
    assert.ok(byVera.length >= 1);
    await until(async () => (await table.locator('tbody tr').count()) === byVera.length);

    // …and by date: from tomorrow (local days) nothing; to tomorrow, Vera's records again.
    const tomorrow = new Date(Date.now() + 86_400_000);
    const day = `${tomorrow.getFullYear()}-${String(tomorrow.getMonth() + 1).padStart(2, '0')}-${String(tomorrow.getDate()).padStart(2, '0')}`;
    await page.getByLabel('From', { exact: true }).fill(day);
    await page.waitForURL(new RegExp(`from=${day}`));
    await page.getByRole('heading', { name: 'No records' }).waitFor();
    await page.getByLabel('From', { exact: true }).fill('');
    await page.getByLabel('To', { exact: true }).fill(day);
    await page.waitForURL(new RegExp(`to=${day}`));
    await until(async () => (await table.locator('tbody tr').count()) === byVera.length);
    assert.match(page.url(), new RegExp(`actor=${vera.user_id}`), 'the other filters stay');

    // An instance administrator makes a second organisation; the invitee, still signed in, accepts
    // an invitation to it with their account (same email) and lands in its project.
    await page.goto(`${base}/admin`);
    await page.getByRole('button', { name: 'New organisation' }).click();
    await page.getByRole('dialog').getByLabel('Name').fill('Beta');
    await page.getByRole('button', { name: 'Create organisation' }).click();
    await page.getByRole('heading', { name: 'Organisation Beta' }).waitFor();
    const beta = (await asOwner('GET', '/orgs')).json.data.find((o: { name: string }) => o.name === 'Beta');
    const betaProjects = (await asOwner('GET', `/orgs/${beta.id}/projects`)).json.data;
    assert.equal(betaProjects.length, 1, 'a new organisation gets a first project to open');
    await page.waitForURL(new RegExp(`/app/p/${betaProjects[0].id}/admin$`));
    await page.getByRole('button', { name: 'Invite someone' }).click();
    await dialog.getByLabel('Email').fill('vera@example.com');
    await dialog.getByLabel('Role').selectOption('member');
    await dialog.getByRole('button', { name: 'Create invitation' }).click();
    const link2 = (await dialog.locator('[data-secret]').textContent()) ?? '';
    await dialog.getByRole('button', { name: 'Done' }).click();
    await ip.goto(link2.replace(/^https:\/\/[^/]+/, w.t.base));
    await ip.getByText('You are signed in as vera@example.com').waitFor();
    await ip.getByRole('button', { name: 'Accept the invitation' }).click();
    await ip.waitForURL(new RegExp(`/app/p/${betaProjects[0].id}/overview$`));
    const betaMembers = (await asOwner('GET', `/orgs/${beta.id}/members`)).json.data;
    assert.equal(betaMembers.find((m: { email: string }) => m.email === 'vera@example.com')?.role, 'member');
    // The link works once.
    await ip.goto(link2.replace(/^https:\/\/[^/]+/, w.t.base));
    await ip.getByRole('button', { name: 'Accept the invitation' }).click();
    await ip.getByRole('alert').filter({ hasText: 'This invitation was accepted already.' }).waitFor();

    assert.deepEqual(w.page.outside, []);
    assert.deepEqual(w.page.consoleErrors, []);
    assert.deepEqual(invitee.outside, []);
    assert.deepEqual(invitee.consoleErrors, [
      'Failed to load resource: the server responded with a status of 409 (Conflict)',
    ]);
    await invitee.context.close();
  });

  it('the sign-in page offers the OpenID Connect provider and says what a failed sign-in means', async () => {
    // The issuer is unreachable: only the button and the callback's error are tested here (the round
    // trip is test/api/oidc.test.ts's).
    const t = await startTestServer({
      MEDIAD_OIDC_ISSUER: 'http://127.0.0.1:9/oidc',
      MEDIAD_OIDC_CLIENT_ID: 'mediad',
      MEDIAD_OIDC_CLIENT_SECRET: 'a client secret long enough for hmac',
      MEDIAD_OIDC_NAME: 'Acme SSO',
    });
    try {
      await setUpOwner(t);
      const g = await guardedPage(w.browser, t.base);
      const { page } = g;
      await page.goto(`${t.base}/app/sign-in?error=oidc_unknown_user`);
      const button = page.getByRole('link', { name: 'Sign in with Acme SSO' });
      await button.waitFor();
      const status = (await t.call('GET', '/auth/status')).json.data;
      assert.equal(await button.getAttribute('href'), status.oidc.start_url);
      await page.getByRole('alert').filter({ hasText: OIDC_SIGN_IN_ERRORS.oidc_unknown_user }).waitFor();
      assert.ok(await page.getByLabel('Password').isVisible(), 'password sign-in is on too');
      assert.deepEqual(await axeViolations(page), []);
      await screenshot(page, 'sign-in-oidc');
      // Without the error, no message.
      await page.goto(`${t.base}/app/sign-in`);
      await button.waitFor();
      assert.equal(await page.getByRole('alert').count(), 0);
      assert.deepEqual(g.outside, []);
      assert.deepEqual(g.consoleErrors, []);
      await g.context.close();
    } finally {
      await t.stop();
    }
  });

  it('hides the password form when password sign-in is off', async () => {
    const t = await startTestServer({
      MEDIAD_OIDC_ISSUER: 'http://127.0.0.1:9/oidc',
      MEDIAD_OIDC_CLIENT_ID: 'mediad',
      MEDIAD_OIDC_CLIENT_SECRET: 'a client secret long enough for hmac',
      MEDIAD_PASSWORD_SIGN_IN: 'false',
    });
    try {
      await setUpOwner(t);
      const g = await guardedPage(w.browser, t.base);
      const { page } = g;
      await page.goto(`${t.base}/app/sign-in`);
      await page.getByRole('link', { name: 'Sign in with single sign-on' }).waitFor();
      assert.equal(await page.getByLabel('Password').count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Sign in' }).count(), 0);
      assert.deepEqual(g.outside, []);
      assert.deepEqual(g.consoleErrors, []);
      await g.context.close();
    } finally {
      await t.stop();
    }
  });
});
