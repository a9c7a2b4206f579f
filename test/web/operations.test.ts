import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { request } from 'undici';
import { createUserInOrg } from '../../src/services/people/users.js';
import { axeViolations, screenshot } from '../helpers/a11y.js';
import { chromiumAvailable, guardedPage } from '../helpers/browser.js';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { waitForTask } from '../helpers/tasks.js';
import { PASSWORD, startWebTest, useSessionCookie, type WebTest } from '../helpers/web.js';

const runFile = promisify(execFile);

// The operations pages in Chromium: the request log (the test's own API calls with a key, their
// statuses, the status filter in the URL, one request, "copy as curl" with no secret anywhere),
// usage (a real image task and a download through the API, shown as totals, charts and tables),
// the queue (pause and resume a kind; the API reflects it; workers), system status (FFmpeg's
// version as the API reports it), and a member who gets no queue buttons.

let w: WebTest;
let origin: Origin;
before(async () => {
  origin = await startOrigin();
  w = await startWebTest({ MEDIAD_ALLOWED_URL_HOSTS: origin.host });
});
after(async () => {
  await w?.close();
  await origin?.close();
});

/** The shell's switcher and user menu are checked by the shell's tests (see webhooks.test.ts). */
const AXE = { exclude: ['.switcher', '.user-button'] };
async function until<T>(probe: () => Promise<T | false | null | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}
const api = (method: string, url: string, body?: unknown) =>
  w.t.call(method, url, { key: w.owner.key, ...(body === undefined ? {} : { body }) });
const pageUrl = (p: string) => `${w.t.base}/app/p/${w.owner.projectId}/${p}`;
const rowOf = (page: Page, id: string) => page.locator(`tr[data-row="${id}"]`);

/** Everything the page holds: its HTML (attributes included) and its visible text. */
async function everything(page: Page): Promise<string> {
  return (await page.content()) + (await page.locator('body').innerText());
}
function assertNoSecrets(where: string, text: string) {
  const cookieValue = w.owner.cookie.slice(w.owner.cookie.indexOf('=') + 1);
  assert.ok(!text.includes(w.owner.key), `${where}: the API key`);
  assert.ok(!text.includes(w.owner.key.slice(4, 20)), `${where}: part of the API key`);
  assert.ok(!text.includes(cookieValue), `${where}: the session cookie`);
  assert.ok(!text.includes(w.owner.csrf), `${where}: the CSRF token`);
}

describe('the operations pages in Chromium', { skip: !chromiumAvailable() && 'no chromium' }, () => {
  it('request log: the test’s calls with their statuses, the filter in the URL, copy as curl, no secrets', async () => {
    const made = await api('POST', '/media', { title: 'Logged clip' });
    assert.equal(made.status, 201);
    const missing = await api('GET', '/media/med_doesnotexist0000000000');
    assert.equal(missing.status, 404);
    const listed = await api('GET', `/media?limit=5&token=${w.owner.key}`);
    // The secret-named query parameter is refused or ignored; either way it is recorded redacted.
    const ids = [made, missing, listed].map((r) => r.headers['x-request-id']!);
    for (const id of ids) assert.match(id, /^req_/);
    const logged = await until(async () => {
      const rows = (await api('GET', '/requests?limit=100')).json.data as { id: string }[];
      return ids.every((id) => rows.some((r) => r.id === id)) && rows;
    });
    const keyName = (await api('GET', `/requests/${ids[0]}`)).json.data.key.name;

    const { page, context } = w.page;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: w.t.base });
    await page.goto(pageUrl('requests'));
    await page.getByRole('heading', { name: 'Request log' }).waitFor();
    await rowOf(page, ids[0]!).waitFor();
    assert.ok(logged.length > 0);
    const expected = [
      [ids[0], 'POST', '201'],
      [ids[1], 'GET', '404'],
      [ids[2], 'GET', String(listed.status)],
    ];
    for (const [id, method, status] of expected) {
      const row = rowOf(page, id!);
      assert.equal(await row.locator('[data-status]').textContent(), status, `${id} status`);
      assert.ok((await row.innerText()).includes(method!), `${id} method`);
      if (keyName) assert.ok((await row.innerText()).includes(keyName), `${id} names the key`);
    }
    assert.ok((await rowOf(page, ids[2]!).innerText()).includes('REDACTED'), 'the token in the query is redacted');
    assertNoSecrets('the request log', await everything(page));
    assert.deepEqual(await axeViolations(page, AXE), []);
    await screenshot(page, 'requests');

    // The status class filter is kept in the URL and survives a reload.
    await page.getByLabel('Status').selectOption('4xx');
    await page.waitForURL(/status_class=4xx/);
    await until(async () => (await page.locator('[data-status]').allTextContents()).every((s) => s.startsWith('4')));
    await rowOf(page, ids[1]!).waitFor();
    assert.equal(await rowOf(page, ids[0]!).count(), 0, 'a 201 is not in 4xx');
    await page.reload();
    await rowOf(page, ids[1]!).waitFor();
    assert.equal(await page.getByLabel('Status').inputValue(), '4xx');
    assert.equal(await rowOf(page, ids[0]!).count(), 0);

    // One request, and its curl command: the key is a placeholder, and running it answers the same.
    await rowOf(page, ids[1]!).getByRole('link', { name: ids[1] }).click();
    await page.waitForURL(new RegExp(`request=${ids[1]}`));
    const detail = page.getByRole('region', { name: `Request ${ids[1]}` });
    await detail.waitFor();
    assert.ok((await detail.innerText()).includes('404'));
    await detail.getByRole('button', { name: 'Copy as curl' }).click();
    await detail.getByText('Copied').waitFor();
    const curl = await page.evaluate<string, undefined>('navigator.clipboard.readText()', undefined);
    assert.equal(
      curl,
      `curl --cacert ${path.join(w.t.dataDir, 'tls', 'ca.crt')} -H "Authorization: Bearer $MEDIAD_API_KEY" '${w.t.base}/media/med_doesnotexist0000000000'`,
    );
    assertNoSecrets('the copied curl', curl);
    // Run as copied, with the key in MEDIAD_API_KEY: the same 404.
    // Asynchronously: the server answers from this process.
    const rerun = await runFile('bash', ['-c', curl], { env: { ...process.env, MEDIAD_API_KEY: w.owner.key } });
    assert.equal(JSON.parse(rerun.stdout).error.status, 404, 'the command names the same resource');
    // The POST's command says its method and takes the body from a file (bodies are not logged).
    await page.goto(pageUrl(`requests?request=${ids[0]}`));
    const post = page.getByRole('region', { name: `Request ${ids[0]}` });
    assert.match(
      await post.locator('[data-curl]').innerText(),
      /^curl --cacert \S+ -X POST .* -d @request\.json '.+\/media'$/,
    );
    // The URL with the secret query value: redacted in the command too.
    await page.goto(pageUrl(`requests?request=${ids[2]}`));
    const third = await page
      .getByRole('region', { name: `Request ${ids[2]}` })
      .locator('[data-curl]')
      .innerText();
    assert.ok(third.includes('token=REDACTED'), third);
    assertNoSecrets('the request detail', await everything(page));
    // The page's own reads (the session's) are logged too, under the person's email.
    await page.goto(pageUrl('requests'));
    await rowOf(page, ids[0]!).waitFor();
    await until(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return (await page.locator('tbody tr', { hasText: w.owner.email }).count()) > 0;
    });
    assertNoSecrets('the request log with session rows', await everything(page));
    assert.deepEqual(await axeViolations(page, AXE), []);
    assert.deepEqual(w.page.outside, []);
    assert.deepEqual(w.page.consoleErrors, []);
  });

  it('usage: the bytes delivered and the tasks the test ran, as totals, charts and tables', async () => {
    const file = await api('POST', '/files', { url: origin.url('/fixtures/image-png') });
    assert.equal(file.status, 201, file.text);
    const size: number = file.json.data.filesize;
    const task = await api('POST', '/tasks', { kind: 'image', file_id: file.json.data.id, width: 32, format: 'webp' });
    assert.equal(task.status, 201, task.text);
    assert.equal((await waitForTask(w.t, w.owner.key, task.json.data.id)).status, 'completed');
    const got = await request(file.json.data.url, { dispatcher: w.t.agent });
    assert.equal((await got.body.arrayBuffer()).byteLength, size);
    const usage = await until(async () => {
      const d = (await api('GET', '/usage?range=24h')).json.data;
      return d.totals.bytes_delivered >= size && d;
    });
    assert.equal(usage.totals.bytes_delivered, size);
    assert.equal(usage.totals.tasks.completed, 1);

    const { page } = w.page;
    await page.goto(pageUrl('usage?range=24h'));
    const delivered = page.locator('[data-stat="delivered"]');
    await delivered.waitFor();
    const fmt = (n: number) => page.evaluate<string, number>((x) => new Intl.NumberFormat().format(x), n);
    assert.ok((await delivered.innerText()).includes(`${await fmt(size)} bytes`), await delivered.innerText());
    assert.equal(await page.locator('[data-stat="tasks"] .stat-value').innerText(), '1');
    assert.ok(
      (await page.locator('[data-stat="storage"]').innerText()).includes(`${await fmt(usage.storage_bytes)} bytes`),
    );
    assert.equal(await page.getByRole('link', { name: '24 hours' }).getAttribute('aria-current'), 'page');
    // Three charts drawn by uPlot, each with its text summary and a table of the same figures.
    await until(async () => (await page.locator('[data-chart] canvas').count()) === 3);
    await screenshot(page, 'usage');
    const tasksFigure = page.getByRole('figure', { name: 'Tasks by status' });
    assert.ok((await tasksFigure.locator('figcaption').innerText()).startsWith('1 completed'));
    await tasksFigure.getByText('Table: Tasks by status').click();
    const table = tasksFigure.getByRole('table');
    assert.equal(await table.locator('tbody tr').count(), 1, 'one hour with tasks');
    assert.deepEqual(await table.locator('tbody tr td').allInnerTexts(), ['1', '0', '0']);
    const bytesFigure = page.getByRole('figure', { name: 'Bytes delivered' });
    await bytesFigure.getByText('Table: Bytes delivered').click();
    assert.equal(await bytesFigure.getByRole('table').locator('tbody tr').count(), 1);
    const processing = page.getByRole('figure', { name: 'Processing time by kind' });
    assert.match(await processing.locator('figcaption').innerText(), /^image: /);
    assert.deepEqual(await axeViolations(page, AXE), []);

    // Another range: in the URL, asked of the API.
    await page.getByRole('link', { name: '30 days' }).click();
    await page.waitForURL(/range=30d/);
    await until(
      async () => (await page.getByRole('link', { name: '30 days' }).getAttribute('aria-current')) === 'page',
    );
    await until(async () => (await page.locator('[data-chart] canvas').count()) === 3);
    assert.ok((await delivered.innerText()).includes(`${await fmt(size)} bytes`));
    assert.deepEqual(w.page.outside, []);
    assert.deepEqual(w.page.consoleErrors, []);
  });

  it('queue and workers: pause and resume a kind, and the API reflects it', async () => {
    const { page } = w.page;
    await page.goto(pageUrl('queue'));
    const row = rowOf(page, 'video');
    await row.waitFor();
    assert.ok((await row.innerText()).includes('Running'));
    await row.getByRole('button', { name: 'Pause video' }).click();
    await row.getByText('Paused').waitFor();
    const paused = (await api('GET', '/queue')).json.data.kinds.find((k: { kind: string }) => k.kind === 'video');
    assert.equal(paused.paused, true, 'the API says video is paused');
    assert.equal(
      (await api('GET', '/queue')).json.data.kinds.find((k: { kind: string }) => k.kind === 'image').paused,
      false,
    );
    // A worker runs in the test server: listed with its heartbeat.
    const workers = (await api('GET', '/workers')).json.data;
    assert.ok(workers.length >= 1);
    const wrow = rowOf(page, workers[0].id);
    await wrow.waitFor();
    assert.ok((await wrow.innerText()).includes(workers[0].host));
    assert.match(await wrow.locator('time').last().innerText(), /\d+ s ago/);
    assert.deepEqual(await axeViolations(page, AXE), []);
    await screenshot(page, 'queue');

    await row.getByRole('button', { name: 'Resume video' }).click();
    await row.getByText('Running').waitFor();
    const resumed = (await api('GET', '/queue')).json.data.kinds.find((k: { kind: string }) => k.kind === 'video');
    assert.equal(resumed.paused, false, 'the API says video runs again');
    // Paused through the API: the page shows it at its next refresh.
    assert.equal((await api('POST', '/queue/kinds/audio/pause')).status, 200);
    await rowOf(page, 'audio').getByText('Paused').waitFor({ timeout: 10_000 });
    assert.equal((await api('POST', '/queue/kinds/audio/resume')).status, 200);
    assert.deepEqual(w.page.outside, []);
    assert.deepEqual(w.page.consoleErrors, []);
  });

  it('system status shows what GET /system reports, FFmpeg’s version included', async () => {
    const sys = (await api('GET', '/system')).json.data;
    const ffmpeg = sys.ffmpeg.find((t: { tool: string }) => t.tool === 'ffmpeg');
    assert.ok(ffmpeg?.found && ffmpeg.version, 'FFmpeg is installed here');
    const { page } = w.page;
    await page.goto(pageUrl('system'));
    const ffRow = rowOf(page, 'ffmpeg');
    await ffRow.waitFor();
    assert.equal(await ffRow.locator('[data-version]').innerText(), ffmpeg.version);
    assert.equal(await page.locator('[data-fact="version"]').innerText(), sys.version);
    assert.equal(
      await page.locator('[data-fact="database"]').innerText(),
      sys.database.backend === 'postgres' ? 'PostgreSQL' : 'SQLite',
    );
    assert.equal(
      await page.locator('[data-fact="storage"]').innerText(),
      sys.storage.backend === 's3' ? `S3 (bucket ${sys.storage.bucket})` : 'disk',
    );
    for (const e of sys.engines.local) await rowOf(page, e.engine).waitFor();
    assert.deepEqual(await axeViolations(page, AXE), []);
    await screenshot(page, 'system');
    assert.deepEqual(w.page.outside, []);
    assert.deepEqual(w.page.consoleErrors, []);
  });

  it('a member sees no queue buttons (and the API refuses them)', async () => {
    await createUserInOrg(w.t.server.runtime.deps, {
      email: 'mia@example.com',
      name: 'Mia Member',
      password: PASSWORD,
      org: 'Acme',
      role: 'member',
    });
    const signedIn = await w.t.call('POST', '/auth/sign-in', {
      body: { email: 'mia@example.com', password: PASSWORD },
    });
    assert.equal(signedIn.status, 200);
    const cookie = signedIn.headers['set-cookie']!.split(';')[0]!;
    const member = await guardedPage(w.browser, w.t.base);
    await useSessionCookie(w.t, member, cookie);
    const { page } = member;
    await page.goto(pageUrl('queue'));
    await page.getByText('Only owners and admins of the organisation see the queue').waitFor();
    assert.equal(await page.getByRole('button', { name: /^(Pause|Resume)/ }).count(), 0);
    assert.equal(await page.getByRole('table').count(), 0);
    const nav = page.getByRole('navigation', { name: 'Project' });
    assert.equal(await nav.getByRole('link', { name: 'Queue and workers' }).count(), 0, 'not in the sidebar');
    assert.equal(await nav.getByRole('link', { name: 'Request log' }).count(), 1);
    assert.deepEqual(await axeViolations(page, AXE), []);
    // The member still reads the system status.
    await page.goto(pageUrl('system'));
    await rowOf(page, 'ffmpeg').waitFor();
    const refused = await w.t.call('POST', '/queue/kinds/video/pause', {
      headers: {
        cookie,
        'x-csrf-token': signedIn.json.data.csrf_token,
        origin: w.t.base,
        'x-mediad-project': w.owner.projectId,
      },
    });
    assert.equal(refused.status, 403);
    assert.equal(refused.json.error.code, 'insufficient_role');
    assert.deepEqual(member.outside, []);
    assert.deepEqual(member.consoleErrors, []);
    await member.context.close();
  });
});
