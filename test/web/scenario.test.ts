import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { spokenWav, speechVideo } from '../helpers/ai-fixtures.js';
import { chromiumAvailable, guardedPage, launchBrowser, type GuardedPage } from '../helpers/browser.js';
import { fixture } from '../helpers/fixtures.js';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';
import { ensureWebBuilt, PASSWORD } from '../helpers/web.js';

// Issue 14's main browser flow, in one test, against a real server (its own workers, a loopback
// origin for the failing ingest): first-run setup → sign in → a read-only key made in the UI and
// used over HTTPS (a read works, a write is 403) → two files uploaded by drag and drop → both in the
// library with thumbnails → an image task run from the generated form, watched to completion → the
// video played (currentTime advances) with its subtitles showing → a failed task retried on the
// tasks page → the key paused, then revoked → sign out. Every request to another host is refused
// and asserted absent; the page logs no console error.
//
const EMAIL = 'olivia@example.com';
const KEY_NAME = 'read-only reports';

let t: TestServer;
let origin: Origin;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
const pages: GuardedPage[] = [];

/** The bytes of a file as a DataTransfer in the page, dropped on `target` as a person would. */
async function dropFiles(page: Page, selector: string, files: { name: string; type: string; path: string }[]) {
  const payload = JSON.stringify(
    files.map((f) => ({ name: f.name, type: f.type, b64: fs.readFileSync(f.path).toString('base64') })),
  );
  const dataTransfer = await page.evaluateHandle(`(() => {
    const dt = new DataTransfer();
    for (const f of ${payload}) {
      const bin = atob(f.b64);
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      dt.items.add(new File([bytes], f.name, { type: f.type }));
    }
    return dt;
  })()`);
  await page.locator(selector).dispatchEvent('dragover', { dataTransfer });
  await page.locator(selector).dispatchEvent('drop', { dataTransfer });
}

/**
 * Waits until `expression` is true in the page. Evaluated over the DevTools protocol each time:
 * page.waitForFunction with a string would eval() it, which the app's CSP (no 'unsafe-eval') refuses.
 */
async function until(page: Page, expression: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate<boolean, undefined>(`Boolean(${expression})`, undefined))) {
    if (Date.now() > deadline) throw new Error(`still false after ${timeoutMs} ms: ${expression}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the web application, end to end', { skip: !chromiumAvailable() && 'no chromium' }, () => {
  before(async () => {
    await ensureWebBuilt();
    origin = await startOrigin();
    t = await startTestServer({
      MEDIAD_ALLOWED_URL_HOSTS: origin.host,
      MEDIAD_SIGN_IN_PER_MINUTE: '1000',
      MEDIAD_SIGN_IN_PER_MINUTE_PER_ADDRESS: '1000',
    });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await t?.stop();
    await origin?.close();
  });

  it('setup → sign in → scoped key → upload → image task → video → retry → pause and revoke → sign out', async () => {
    // 1. First-run setup, from the link the server logged.
    assert.ok(t.server.setupUrl, 'the server logged a setup link');
    assert.match(t.server.setupUrl, /\/app\/setup#token=/);
    const setup = await guardedPage(browser, t.base);
    pages.push(setup);
    const setupPage = setup.page;
    await setupPage.goto(t.server.setupUrl);
    await setupPage.getByRole('heading', { name: 'Set up mediad' }).waitFor();
    await setupPage.getByLabel('Your name').fill('Olivia Owner');
    await setupPage.getByLabel('Email').fill(EMAIL);
    await setupPage.getByLabel('Password').fill(PASSWORD);
    await setupPage.getByLabel('Organisation').fill('Acme');
    await setupPage.getByLabel('First project').fill('Website');
    await setupPage.getByRole('button', { name: 'Create owner and project' }).click();
    const fullKey = (await setupPage.getByLabel('Your new API key', { exact: true }).innerText()).trim();
    await setupPage.getByRole('button', { name: 'Continue to Website' }).click();
    await setupPage.waitForURL(/\/app\/p\/prj_[^/]+\/overview$/);
    const projectId = /\/p\/(prj_[^/]+)\//.exec(setupPage.url())![1]!;
    await setup.context.close();
    assert.match(fullKey, /^mdk_/);
    assert.equal((await t.call('GET', '/auth/status')).json.data.setup_required, false);
    const api = (method: string, path: string, body?: unknown, key = fullKey) =>
      t.call(method, path, { key, ...(body === undefined ? {} : { body }) });

    // 2. Sign in, in a browser that has no session yet.
    const signed = await guardedPage(browser, t.base);
    pages.push(signed);
    const { page } = signed;
    const at = (p: string) => `${t.base}/app/p/${projectId}/${p}`;
    await page.goto(`${t.base}/app/`);
    await page.waitForURL(/\/app\/sign-in$/);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(new RegExp(`/app/p/${projectId}/overview$`));

    // 3. A read-only key made in the UI, used from here over HTTPS.
    await page.goto(at('keys'));
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.getByLabel('Name').fill(KEY_NAME);
    await dialog.getByLabel('Choose per resource').check();
    // Files and media: read; Tasks: read (the dialog's defaults, chosen explicitly).
    await dialog.getByLabel('Files and media: read', { exact: true }).check();
    await dialog.getByLabel('Tasks: read', { exact: true }).check();
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const scoped = (await page.getByLabel('New API key', { exact: true }).innerText()).trim();
    await page.getByRole('button', { name: 'Done' }).click();
    const keyRow = (await api('GET', '/keys')).json.data.find((k: any) => k.name === KEY_NAME);
    assert.deepEqual(keyRow.scopes.sort(), ['files:read', 'tasks:read']);
    assert.equal((await api('GET', '/media', undefined, scoped)).status, 200, 'a read works');
    const write = await api('POST', '/tasks', { kind: 'ingest', url: origin.url('/fixtures/image-png') }, scoped);
    assert.equal(write.status, 403, 'a write does not');
    assert.equal(write.json.error.code, 'insufficient_scope');

    // 4–5. Two files uploaded by drag and drop, then in the library with their thumbnails.
    const imagePath = await fixture('image-png');
    const videoPath = await speechVideo(
      await spokenWav('The quick brown fox jumps over the lazy dog. Hello from the web application test.'),
      'scenario',
    );
    await page.goto(at('media'));
    await dropFiles(page, '[data-testid="dropzone"]', [
      { name: 'still.png', type: 'image/png', path: imagePath },
      { name: 'talk.mp4', type: 'video/mp4', path: videoPath },
    ]);
    const grid = page.getByRole('list', { name: 'Media' });
    await grid.getByRole('listitem').nth(1).waitFor({ timeout: 60_000 });
    assert.equal(await grid.getByRole('listitem').count(), 2);
    await until(
      page,
      `(() => { const imgs = [...document.querySelectorAll('[aria-label="Media"] img')];
        return imgs.length >= 1 && imgs.every((i) => i.complete && i.naturalWidth > 0); })()`,
      60_000,
    );
    const mediaOf = async (kind: string) => {
      const list = (await api('GET', `/media?kind=${kind}`)).json.data;
      assert.equal(list.length, 1, `one ${kind} media`);
      return list[0];
    };
    const image = await mediaOf('image');
    const video = await mediaOf('video');

    // 6. An image task from the form generated from GET /tasks-config, watched until it completes.
    await page.goto(at(`media/${image.id}`));
    const form = page.getByRole('form', { name: 'Run a task' });
    await form.getByLabel('Kind').selectOption('image');
    await form.getByRole('button', { name: 'Run image' }).click();
    await page
      .getByRole('list', { name: 'Tasks of this media' })
      .getByRole('listitem')
      .filter({ hasText: 'image' })
      .filter({ hasText: /completed/i })
      .waitFor({ timeout: 60_000 });
    const imageTasks = (await api('GET', `/tasks?kind=image&media_id=${image.id}`)).json.data;
    assert.equal(imageTasks.length, 1);
    assert.equal((await waitForTask(t, fullKey, imageTasks[0].id)).status, 'completed');

    // 7. The video plays with its subtitles showing (the subtitles task runs through the API first).
    const subs = await api('POST', '/tasks', { kind: 'subtitles', file_id: video.files[0].id });
    assert.equal(subs.status, 201, subs.text);
    assert.equal((await waitForTask(t, fullKey, subs.json.data.id, undefined, 180_000)).status, 'completed');
    await page.goto(at(`media/${video.id}`));
    await page.locator('video').waitFor();
    await page.evaluate(
      `(async () => { const v = document.querySelector('video'); v.muted = true; await v.play(); })()`,
    );
    await until(page, `document.querySelector('video').currentTime > 0.5`, 20_000);
    await until(
      page,
      `[...document.querySelector('video').textTracks].some((tr) =>
        (tr.kind === 'subtitles' || tr.kind === 'captions') && tr.mode === 'showing' && tr.cues && tr.cues.length > 0)`,
      20_000,
    );

    // 8. A task that really failed (the origin answers 404 once), retried on the tasks page.
    const failing = await api('POST', '/tasks', { kind: 'ingest', url: origin.url('/once-missing/image-jpeg') });
    assert.equal(failing.status, 201, failing.text);
    const failed = await waitForTask(t, fullKey, failing.json.data.id);
    assert.equal(failed.status, 'failed');
    await page.goto(at('tasks?status=failed'));
    const failedRow = page.locator(`tr[data-row="${failed.id}"]`);
    await failedRow.getByText('source_rejected').waitFor();
    await failedRow.getByRole('button', { name: `Retry ${failed.id}` }).click();
    await page.getByText(`Task ${failed.id} retried`, { exact: true }).waitFor();
    const retry = (await api('GET', '/tasks?kind=ingest')).json.data.find((x: any) => x.retry_of === failed.id);
    assert.ok(retry, 'a new task runs the failed one again');
    await page.getByLabel('Status').selectOption('');
    await page
      .locator(`tr[data-row="${retry.id}"]`)
      .getByText('Completed', { exact: true })
      .waitFor({ timeout: 60_000 });

    // 9. The key paused (401), then revoked (401 for good).
    await page.goto(at('keys'));
    await page.getByRole('button', { name: `Pause ${KEY_NAME}` }).click();
    await page.getByRole('button', { name: `Resume ${KEY_NAME}` }).waitFor();
    assert.equal((await api('GET', '/media', undefined, scoped)).status, 401, 'a paused key is refused');
    await page.getByRole('button', { name: `Revoke ${KEY_NAME}` }).click();
    const confirm = page.getByRole('alertdialog');
    await confirm.getByLabel(/Type revoke to confirm/).fill('revoke');
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await confirm.waitFor({ state: 'detached' });
    assert.equal((await api('GET', '/media', undefined, scoped)).status, 401);
    const revoked = (await api('GET', '/keys')).json.data.find((k: any) => k.id === keyRow.id);
    assert.ok(revoked?.revoked, 'the key is revoked (when it was)');

    // 10. Sign out: the app is behind sign-in again.
    await page.getByRole('button', { name: /Account menu/ }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.waitForURL(/\/app\/sign-in$/);
    await page.goto(at('tasks'));
    await page.waitForURL(/\/app\/sign-in$/);

    for (const p of pages) {
      assert.deepEqual(p.outside, [], 'no request left the server');
      assert.deepEqual(p.consoleErrors, [], 'no console error');
    }
  });
});
