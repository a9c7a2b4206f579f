import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createUserInOrg } from '../../src/services/people/users.js';
import { chromiumAvailable, guardedPage, launchBrowser, type GuardedPage } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ensureWebBuilt, PASSWORD } from '../helpers/web.js';
import { axeViolations, screenshot } from '../helpers/a11y.js';

// The web application's own pages in Chromium against a real server: first-run setup from the
// link the server logged, sign-out and sign-in, a read-only key made in the UI and used over
// HTTPS, pause/resume/revoke, the account and settings pages, a viewer's view, a cross-site form
// post. Every page is checked with axe-core (no serious or critical violations), with nothing
// fetched from another host and no console error. MEDIAD_SCREENSHOTS=1 writes docs/screenshots/.

let t: TestServer;
let browser: Browser;
let owner: GuardedPage;
let projectId = '';

before(async () => {
  await ensureWebBuilt();
  t = await startTestServer({ MEDIAD_SIGN_IN_PER_MINUTE: '1000', MEDIAD_SIGN_IN_PER_MINUTE_PER_ADDRESS: '1000' });
  if (chromiumAvailable()) {
    browser = await launchBrowser();
    owner = await guardedPage(browser, t.base);
    owner.page.setDefaultTimeout(8000);
  }
});
after(async () => {
  await browser?.close();
  await t.stop();
});

/** axe-core: no serious or critical violation on the page as it is. */
async function checkA11y(page: Page, what: string): Promise<void> {
  const violations = await axeViolations(page);
  assert.deepEqual(violations, [], `${what}: accessibility violations ${JSON.stringify(violations)}`);
}

/** The status of the next PATCH /account the page sends (a theme choice is saved after it applies). */
async function savedTheme(page: Page): Promise<number> {
  const answer = await page.waitForResponse((r) => r.url().endsWith('/account') && r.request().method() === 'PATCH');
  return answer.status();
}

function clean(p: GuardedPage, what: string): void {
  assert.deepEqual(p.outside, [], `${what}: requests to other hosts`);
  assert.deepEqual(p.consoleErrors, [], `${what}: console errors`);
}

describe('web app: setup, sign-in, keys, account, settings', { skip: !chromiumAvailable() && 'no chromium' }, () => {
  let readKey = '';

  it('first-run setup from the logged link shows the key once and opens the project', async () => {
    const { page } = owner;
    assert.ok(t.server.setupUrl);
    await page.goto(`${t.base}/app/`);
    await page.waitForURL(/\/app\/setup$/);
    await page.getByRole('heading', { name: 'Set up mediad' }).waitFor();
    assert.ok(await page.getByText('needs the setup link').isVisible(), 'without the token the page says where it is');
    await page.goto(t.server.setupUrl);
    await page.getByRole('heading', { name: 'Set up mediad' }).waitFor();
    await checkA11y(page, 'setup');
    await page.getByLabel('Your name').fill('Olivia Owner');
    await page.getByLabel('Email').fill('olivia@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Organisation').fill('Acme');
    await page.getByLabel('First project').fill('Website');
    await screenshot(page, 'setup');
    await page.getByRole('button', { name: 'Create owner and project' }).click();
    await page.getByRole('heading', { name: 'mediad is ready' }).waitFor();
    assert.ok(!page.url().includes('token='), 'the spent token leaves the address bar');
    const key = (await page.locator('[data-secret]').textContent()) ?? '';
    assert.match(key, /^mdk_/);
    assert.equal((await t.call('GET', '/media', { key })).status, 200, 'the key shown works');
    await page.getByRole('button', { name: /Continue to Website/ }).click();
    await page.waitForURL(/\/app\/p\/prj_\w+\/overview$/);
    projectId = /\/p\/(prj_\w+)\//.exec(page.url())![1]!;
    await page.getByRole('heading', { name: 'Getting started' }).waitFor();
    await page.getByText('Failures in 24 h').waitFor();
    assert.ok((await page.locator('pre').first().textContent())!.includes(t.base), 'snippets show this server');
    await checkA11y(page, 'overview');
    await screenshot(page, 'overview');
    clean(owner, 'setup and overview');
  });

  it('signs out, sends a protected page to sign-in, and signs in again (a wrong password gets the generic error)', async () => {
    const { page } = owner;
    await page.getByRole('button', { name: /Account menu/ }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.waitForURL(/\/app\/sign-in$/);
    await page.goto(`${t.base}/app/p/${projectId}/keys`);
    await page.waitForURL(/\/app\/sign-in$/);
    await checkA11y(page, 'sign-in');
    await screenshot(page, 'sign-in');
    await page.getByLabel('Email').fill('olivia@example.com');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('The email or password is not right.').waitFor();
    owner.consoleErrors.length = 0; // Chromium logs the 401 of that attempt
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(new RegExp(`/app/p/${projectId}/keys$`), { timeout: 10_000 });
    clean(owner, 'sign-in');
  });

  it('creates a read-only key in the UI that reads but cannot write; pause, resume and revoke take effect', async () => {
    const { page } = owner;
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.locator('tr[data-row]').first().waitFor();
    await checkA11y(page, 'keys');
    await page.getByRole('button', { name: 'Create key' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill('reader');
    await dialog.getByLabel('Choose per resource').check();
    await dialog.getByLabel('Tasks: no access').check();
    await checkA11y(page, 'create key dialog');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    await dialog.getByText('Your new API key').waitFor();
    readKey = (await dialog.locator('[data-secret]').textContent()) ?? '';
    assert.match(readKey, /^mdk_/);
    await dialog.getByRole('button', { name: 'Done' }).click();
    const row = page.locator('tr', { hasText: 'reader' });
    await row.getByText('files:read').waitFor();
    assert.equal(await row.getByText('tasks:').count(), 0);
    await screenshot(page, 'keys');

    assert.equal((await t.call('GET', '/media', { key: readKey })).status, 200, 'a read works');
    const write = await t.call('POST', '/media', { key: readKey, body: { title: 'nope' } });
    assert.equal(write.status, 403);
    assert.equal(write.json.error.code, 'insufficient_scope');
    assert.equal((await t.call('GET', '/tasks', { key: readKey })).status, 403, 'no tasks scope');

    await row.getByRole('button', { name: 'Pause reader' }).click();
    await row.getByText('Paused').waitFor();
    assert.equal((await t.call('GET', '/media', { key: readKey })).status, 401, 'paused');
    await row.getByRole('button', { name: 'Resume reader' }).click();
    await row.getByText('Active').waitFor();
    assert.equal((await t.call('GET', '/media', { key: readKey })).status, 200, 'resumed');

    await row.getByRole('button', { name: 'Revoke reader' }).click();
    const confirm = page.getByRole('alertdialog');
    const button = confirm.getByRole('button', { name: 'Revoke key' });
    assert.equal(await button.isDisabled(), true, 'the typed confirmation is required');
    await checkA11y(page, 'revoke dialog');
    await confirm.getByLabel(/Type/).fill('revoke');
    await button.click();
    await row.getByText('Revoked').waitFor();
    assert.equal((await t.call('GET', '/media', { key: readKey })).status, 401, 'revoked');
    clean(owner, 'keys');
  });

  it('account: name, theme (saved to the account), sessions', async () => {
    const { page } = owner;
    await page.goto(`${t.base}/app/account`);
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    await page.getByText('This session').waitFor();
    await checkA11y(page, 'account');
    await screenshot(page, 'account');
    // The class is applied at once and the account saved after: wait for the save's answer.
    const savedDark = savedTheme(page);
    await page.getByLabel('Dark').check();
    assert.equal(await savedDark, 200, 'the dark theme is saved');
    await page.waitForFunction("document.documentElement.classList.contains('dark')");
    await page.reload();
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    assert.equal(await page.evaluate("document.documentElement.classList.contains('dark')"), true);
    await checkA11y(page, 'account (dark)');
    await page.goto(`${t.base}/app/p/${projectId}/overview`);
    await page.getByText('Failures in 24 h').waitFor();
    await screenshot(page, 'overview-dark');
    await page.goto(`${t.base}/app/account`);
    const savedLight = savedTheme(page);
    await page.getByLabel('Light').check();
    assert.equal(await savedLight, 200, 'the light theme is saved');
    await page.waitForFunction("!document.documentElement.classList.contains('dark')");
    const me = await t.call('POST', '/auth/sign-in', { body: { email: 'olivia@example.com', password: PASSWORD } });
    assert.equal(me.json.data.user.theme, 'light', 'the theme is stored on the account');
    clean(owner, 'account');
  });

  it('settings: signed delivery and the default version are saved; the webhook secret is revealed and rotated', async () => {
    const { page } = owner;
    await page.goto(`${t.base}/app/p/${projectId}/settings`);
    await page.getByRole('heading', { name: 'Webhook signing secret' }).waitFor();
    await checkA11y(page, 'settings');
    await screenshot(page, 'settings');
    await page.getByLabel('Require signed URLs to download files').check();
    await page.getByLabel('Default API version').selectOption('2025-08-20');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved').first().waitFor();
    const project = await t.call('GET', '/project', { key: await freshKey() });
    assert.equal(project.json.require_signed_delivery ?? project.json.data?.require_signed_delivery, true);
    assert.equal(project.headers['mediad-version'], '2025-08-20', 'the default version changed');
    // The app still reads the envelope: it asks for it explicitly.
    await page.reload();
    await page.getByRole('heading', { name: 'Webhook signing secret' }).waitFor();
    assert.equal(await page.getByLabel('Require signed URLs to download files').isChecked(), true);

    await page.getByRole('button', { name: 'Reveal secret' }).click();
    const first = await page.locator('[data-secret]').textContent();
    assert.match(first ?? '', /^whsec_/);
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Rotate' }).click();
    await page.getByText('Secret rotated').first().waitFor();
    const second = await page.locator('[data-secret]').textContent();
    assert.match(second ?? '', /^whsec_/);
    assert.notEqual(second, first);
    clean(owner, 'settings');
    // Back to the envelope generation for the checks that follow.
    const reset = await t.call('PATCH', '/project', {
      key: await freshKey(),
      headers: { 'accept-version': '2025-07-01' },
      body: { api_version: '2025-07-01', require_signed_delivery: false },
    });
    assert.equal(reset.status, 200);
  });

  it('a viewer sees no write buttons, and the API refuses their writes', async () => {
    await createUserInOrg(t.server.runtime.deps, {
      email: 'victor@example.com',
      name: 'Victor Viewer',
      password: PASSWORD,
      org: 'Acme',
      role: 'viewer',
    });
    const viewer = await guardedPage(browser, t.base);
    const { page } = viewer;
    await page.goto(`${t.base}/app/sign-in`);
    await page.getByLabel('Email').fill('victor@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/overview$/);
    await page.getByText('Failures in 24 h').waitFor();
    const nav = page.getByRole('navigation', { name: 'Project' });
    assert.equal(await nav.getByRole('link', { name: 'API keys' }).count(), 0, 'no keys in the sidebar');
    assert.equal(await nav.getByRole('link', { name: 'Settings' }).count(), 0, 'no settings in the sidebar');
    assert.equal(await page.getByRole('link', { name: 'create one' }).count(), 0);
    await page.goto(`${t.base}/app/p/${projectId}/keys`);
    await page.getByText('Only owners and admins').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0);
    viewer.consoleErrors.length = 0; // the API's 403 for GET /keys is logged by Chromium
    await page.goto(`${t.base}/app/p/${projectId}/settings`);
    await page.getByText('Only owners and admins').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Save settings' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Rotate secret' }).count(), 0);
    await checkA11y(page, 'settings (viewer)');
    assert.deepEqual(viewer.outside, []);

    const signedIn = await t.call('POST', '/auth/sign-in', {
      body: { email: 'victor@example.com', password: PASSWORD },
    });
    const headers = {
      cookie: signedIn.headers['set-cookie']!.split(';')[0]!,
      'x-csrf-token': signedIn.json.data.csrf_token,
      origin: t.base,
      'x-mediad-project': projectId,
    };
    const write = await t.call('POST', '/media', { headers, body: { title: 'x' } });
    assert.equal(write.status, 403);
    assert.equal(write.json.error.code, 'insufficient_role');
    const keys = await t.call('POST', '/keys', { headers, body: { name: 'x' } });
    assert.equal(keys.status, 403);
    await viewer.context.close();
  });

  it('refuses a form another origin posts with the session cookie, and nothing changes', async () => {
    const before = await t.call('GET', '/keys', { key: await freshKey() });
    const page = (res: http.ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>x</title><body>
<form id="f" method="POST" action="${t.base}/keys" enctype="text/plain">
<input type="hidden" name='{"name":"stolen","x":"' value='"}'>
</form><script>document.getElementById('f').submit()</script></body>`);
    };
    // Another site: the browser keeps the SameSite=Lax cookie to itself, so the post arrives without
    // a session. (A post that does carry the cookie without this origin and the CSRF token is a 403
    // csrf_failed: test/api/accounts.test.ts.)
    const crossSite = http.createServer((_req, res) => page(res));
    const listen = (server: http.Server) =>
      new Promise<number>((r) => server.listen(0, '127.0.0.1', () => r((server.address() as AddressInfo).port)));
    const forged = async (attacker: string) => {
      const tab = await owner.context.newPage();
      const answer = tab.waitForResponse((r) => r.url() === `${t.base}/keys` && r.request().method() === 'POST');
      await tab.goto(`${attacker}/`);
      const res = await answer;
      const body = await res.json();
      await tab.close();
      return { status: res.status(), code: body.error?.code };
    };
    try {
      const other = `http://127.0.0.1:${await listen(crossSite)}`;
      await owner.context.route(`${other}/**`, (route) => route.continue());
      assert.deepEqual(await forged(other), { status: 401, code: 'unauthorized' }, 'another site: no cookie sent');
    } finally {
      crossSite.close();
    }
    const afterwards = await t.call('GET', '/keys', { key: await freshKey() });
    assert.equal(
      afterwards.json.data.filter((k: any) => k.name === 'stolen').length,
      0,
      'no key was made by the forged post',
    );
    assert.equal(afterwards.json.data.length, before.json.data.length + 1, 'only the checking key was added');
  });
});

/** A new full-access key of the project (through the CLI function), for checks from the test. */
async function freshKey(): Promise<string> {
  return (await t.key('Acme', 'Website')).key;
}
