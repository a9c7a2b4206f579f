import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { axeViolations, screenshot } from '../helpers/a11y.js';
import { chromiumAvailable } from '../helpers/browser.js';
import { startReceiver, type Received } from '../helpers/receiver.js';
import { startWebTest, type WebTest } from '../helpers/web.js';

// The Webhooks pages in Chromium against a receiver on loopback (allowed with MEDIAD_ALLOWED_URL_HOSTS):
// an endpoint added in the UI, a test event sent from the UI and verified by the receiver with the
// secret the UI showed once; a failing receiver's attempts and automatic retry in the delivery log,
// recovery and redelivery from the UI; 410 Gone disabling the endpoint, shown with its reason, and
// re-enabled from the UI; edit, delete, the project secret; the verification snippets run against a
// real delivery; axe-core on each page, nothing fetched from elsewhere, no console error.

type Mode = 'ok' | 'fail' | 'gone';
let w: WebTest;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let mode: Mode = 'ok';
let secret: string | null = null;
/** Per request received: whether its signature verified with the secret the UI showed. */
const verified: boolean[] = [];
let endpointId = '';

const headersOf = (r: Received) => {
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) if (typeof v === 'string') h[k] = v;
  return h;
};

before(async () => {
  receiver = await startReceiver((_n, r) => {
    let ok: boolean;
    try {
      if (secret) new Webhook(secret).verify(r.body, headersOf(r));
      ok = secret !== null;
    } catch {
      ok = false;
    }
    verified.push(ok);
    return { status: mode === 'ok' ? 200 : mode === 'fail' ? 500 : 410 };
  });
  w = await startWebTest({ MEDIAD_ALLOWED_URL_HOSTS: '127.0.0.1' });
});
after(async () => {
  await w?.close();
  await receiver?.close();
});

async function noSeriousA11y(page: Page, what: string) {
  const v = await axeViolations(page);
  assert.deepEqual(v, [], `${what}: ${JSON.stringify(v, null, 2)}`);
}

const api = (method: string, url: string, body?: unknown) =>
  w.t.call(method, url, { key: w.owner.key, ...(body === undefined ? {} : { body }) });

/** The first row of the deliveries table (newest). */
const firstDelivery = (page: Page) => page.locator('table:has(caption:text-is("Deliveries")) tbody tr').first();

describe('the Webhooks pages in Chromium', { skip: !chromiumAvailable() && 'no chromium' }, () => {
  it('adds an endpoint, shows its secret once, sends a test event that the receiver verifies', async () => {
    const { page } = w.page;
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/webhooks`);
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'No webhook endpoints' }).waitFor();
    await noSeriousA11y(page, 'webhooks, empty');

    await page.getByRole('button', { name: 'Add endpoint' }).first().click();
    const form = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
    await form.getByLabel('Endpoint URL').fill(receiver.url('/in'));
    await form.getByLabel('Description').fill('loopback receiver');
    assert.ok(await form.getByRole('checkbox', { name: /All events/ }).isChecked());
    await noSeriousA11y(page, 'add endpoint dialog');
    await form.getByRole('button', { name: 'Add endpoint' }).click();

    const shown = page.getByRole('dialog', { name: 'Endpoint added' });
    secret = (await shown.locator('[data-secret]').textContent()) ?? '';
    assert.match(secret, /^whsec_[A-Za-z0-9+/=]+$/);
    await shown.getByRole('button', { name: 'I have saved it' }).click();

    const listed = (await api('GET', '/webhooks')).json.data;
    assert.equal(listed.length, 1);
    assert.deepEqual(
      [listed[0].url, listed[0].events, listed[0].description],
      [receiver.url('/in'), ['*'], 'loopback receiver'],
    );
    assert.ok(!('secret' in listed[0]), 'the API shows the secret only in the create answer');
    endpointId = listed[0].id;

    await page.getByRole('link', { name: receiver.url('/in'), exact: true }).click();
    await page.waitForURL(new RegExp(`/webhooks/${endpointId}$`));
    await page.getByRole('heading', { name: 'No deliveries yet' }).waitFor();
    await page.getByRole('button', { name: 'Send test event' }).click();
    await firstDelivery(page).getByText('delivered', { exact: true }).waitFor({ timeout: 15_000 });

    assert.equal(receiver.received.length, 1);
    assert.deepEqual(verified, [true], 'the receiver verified the signature with the secret the UI showed');
    const [delivery] = (await api('GET', `/webhooks/${endpointId}/deliveries`)).json.data;
    assert.equal(delivery.event_type, 'webhook.test');
    assert.equal(receiver.received[0]!.headers['webhook-id'], delivery.event_id);

    await page.getByRole('button', { name: `Details of ${delivery.id}` }).click();
    await page.waitForURL(new RegExp(`delivery=${delivery.id}`));
    const panel = page.locator(`[data-delivery="${delivery.id}"]`);
    const attempts = panel.locator('table tbody tr');
    await attempts.first().waitFor();
    assert.equal(await attempts.count(), 1);
    assert.match((await attempts.first().textContent()) ?? '', /succeeded.*200.*\d+ ms/);
    const payload = JSON.parse((await panel.getByLabel('Payload sent').textContent()) ?? '');
    assert.deepEqual(payload, JSON.parse(receiver.received[0]!.body), 'the payload shown is the body sent');
    await noSeriousA11y(page, 'endpoint page with a delivery open');
    assert.deepEqual(w.page.outside, []);
    assert.deepEqual(w.page.consoleErrors, []);
  });

  it('shows a failing receiver’s attempts and automatic retry, then redelivers after it recovers', async () => {
    const { page } = w.page;
    mode = 'fail';
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/webhooks/${endpointId}`);
    await page.getByRole('button', { name: 'Send test event' }).click();
    // Attempt 1 at once, attempt 2 after about 5 s (the schedule), then the next is minutes away.
    const row = firstDelivery(page);
    await row.getByLabel('2 attempts').waitFor({ timeout: 20_000 });
    const rowText = (await row.textContent()) ?? '';
    assert.match(rowText, /pending/);
    assert.match(rowText, /500.*500/);
    assert.equal(receiver.received.length, 3);

    const list = (await api('GET', `/webhooks/${endpointId}/deliveries`)).json.data;
    const failing = list.find((d: { event_type: string; status: string }) => d.status === 'pending');
    assert.ok(failing?.next_attempt, 'another attempt is scheduled');
    await row.getByRole('button', { name: `Details of ${failing.id}` }).click();
    const panel = page.locator(`[data-delivery="${failing.id}"]`);
    await panel.locator('table tbody tr').nth(1).waitFor();
    const attemptRows = await panel.locator('table tbody tr').allTextContents();
    assert.equal(attemptRows.length, 2);
    for (const r of attemptRows) assert.match(r, /failed.*500/);
    assert.match((await panel.textContent()) ?? '', /next attempt/);
    await screenshot(page, 'webhooks');

    mode = 'ok';
    await panel.getByRole('button', { name: `Retry now ${failing.id}` }).click();
    await panel.locator('table tbody tr').nth(2).waitFor({ timeout: 15_000 });
    await panel.getByText('delivered', { exact: true }).waitFor({ timeout: 15_000 });
    assert.match((await panel.locator('table tbody tr').nth(2).textContent()) ?? '', /succeeded.*200/);
    assert.equal(receiver.received.length, 4);
    const ids = receiver.received.slice(1).map((r) => r.headers['webhook-id']);
    assert.deepEqual(new Set(ids).size, 1, 'the retries carry the same webhook-id');
    assert.deepEqual(verified, [true, true, true, true]);

    // A delivered one can be sent again (the first test event).
    await page.getByRole('button', { name: 'Close' }).click();
    const first = list.find((d: { status: string }) => d.status === 'delivered');
    await page.getByRole('button', { name: `Redeliver ${first.id}` }).click();
    await receiver.waitFor(5);
    assert.equal(receiver.received[4]!.headers['webhook-id'], first.event_id);
    await page.locator(`tr[data-row="${first.id}"]`).getByLabel('2 attempts').waitFor({ timeout: 10_000 });
    assert.deepEqual(w.page.outside, []);
    assert.deepEqual(w.page.consoleErrors, []);
  });

  it('shows an endpoint disabled by 410 Gone with the reason, and re-enables it', async () => {
    const { page } = w.page;
    mode = 'gone';
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/webhooks/${endpointId}`);
    await page.getByRole('button', { name: 'Send test event' }).click();
    const banner = page.locator('[data-disabled]');
    await banner.waitFor({ timeout: 15_000 });
    const ep = (await api('GET', `/webhooks/${endpointId}`)).json.data;
    assert.equal(ep.enabled, false);
    assert.ok(ep.disabled_reason, 'the API says why');
    assert.ok(((await banner.textContent()) ?? '').includes(ep.disabled_reason), 'the page shows the API’s reason');
    assert.ok(await page.getByRole('button', { name: 'Send test event' }).isDisabled());
    await noSeriousA11y(page, 'disabled endpoint');

    mode = 'ok';
    await banner.getByRole('button', { name: 'Re-enable' }).click();
    await banner.waitFor({ state: 'detached' });
    assert.equal((await api('GET', `/webhooks/${endpointId}`)).json.data.enabled, true);
    const before = receiver.received.length;
    await page.getByRole('button', { name: 'Send test event' }).click();
    await receiver.waitFor(before + 1);
    await firstDelivery(page).getByText('delivered', { exact: true }).waitFor({ timeout: 15_000 });
    assert.deepEqual(w.page.consoleErrors, []);
  });

  it('edits and deletes endpoints, reveals the project secret, and its snippets verify a real delivery', async () => {
    const { page } = w.page;
    const other = (await api('POST', '/webhooks', { url: receiver.url('/other'), events: ['task.failed'] })).json.data;
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/webhooks`);
    await page.getByRole('button', { name: `Edit ${receiver.url('/in')}` }).click();
    const form = page.getByRole('dialog', { name: 'Edit webhook endpoint' });
    await form.getByRole('checkbox', { name: /All events/ }).uncheck();
    await form.getByRole('checkbox', { name: 'media.created' }).check();
    await form.getByRole('checkbox', { name: 'task.completed' }).check();
    await form.getByRole('button', { name: 'Save' }).click();
    await form.waitFor({ state: 'detached' });
    await page.locator(`tr[data-row="${endpointId}"]`).getByText('task.completed').waitFor();
    assert.deepEqual((await api('GET', `/webhooks/${endpointId}`)).json.data.events, [
      'media.created',
      'task.completed',
    ]);

    await page.getByRole('button', { name: `Delete ${receiver.url('/other')}` }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete endpoint' }).click();
    await page.locator(`tr[data-row="${other.id}"]`).waitFor({ state: 'detached' });
    assert.equal((await api('GET', `/webhooks/${other.id}`)).status, 404);

    await page.getByRole('button', { name: 'Reveal secret' }).click();
    const projectSecret = (await api('GET', '/project/webhook-secret')).json.data.secret;
    assert.equal(await page.locator('code[data-secret]').textContent(), projectSecret);
    await noSeriousA11y(page, 'webhooks list');

    // The snippets as the page shows them, run against the first delivery the receiver got.
    const hit = receiver.received[0]!;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediad-snippets-'));
    await page.getByRole('tab', { name: 'JavaScript (node:crypto)' }).click();
    const nodeCode = (await page.locator('[data-snippet="node"]').textContent()) ?? '';
    fs.writeFileSync(path.join(dir, 'verify.mjs'), nodeCode);
    const { verify } = await import(pathToFileURL(path.join(dir, 'verify.mjs')).href);
    // The timestamp check is part of the snippet: the delivery is seconds old here.
    assert.equal(verify(secret, headersOf(hit), hit.body).type, 'webhook.test');
    assert.throws(() => verify(secret, headersOf(hit), hit.body.replace('webhook.test', 'webhook.tesT')), /signature/);

    await page.getByRole('tab', { name: 'Python' }).click();
    const pyCode = (await page.locator('[data-snippet="python"]').textContent()) ?? '';
    fs.writeFileSync(
      path.join(dir, 'check.py'),
      `${pyCode}\nimport sys\nargs = json.load(sys.stdin)\ntry:\n    print(verify(args["secret"], args["headers"], args["body"].encode())["type"])\nexcept ValueError as e:\n    print("refused:", e)\n`,
    );
    const py = (body: string) =>
      spawnSync('python3', [path.join(dir, 'check.py')], {
        input: JSON.stringify({ secret, headers: headersOf(hit), body }),
        encoding: 'utf8',
      });
    const good = py(hit.body);
    if (good.error || good.status !== 0) console.log(`python3 not usable here: ${good.error ?? good.stderr}`);
    else {
      assert.equal(good.stdout.trim(), 'webhook.test');
      assert.match(py(`${hit.body} `).stdout, /refused: the signature does not match/);
    }
    fs.rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(w.page.outside, []);
    assert.deepEqual(w.page.consoleErrors, []);
  });
});
