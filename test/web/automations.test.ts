import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { createUserInOrg } from '../../src/services/people/users.js';
import { axeViolations, screenshot } from '../helpers/a11y.js';
import { chromiumAvailable, guardedPage } from '../helpers/browser.js';
import { fixture } from '../helpers/fixtures.js';
import { PASSWORD, startWebTest, type WebTest } from '../helpers/web.js';
import { putFile, until } from './media-support.js';

// The Automations pages in Chromium: an automation built in the builder (trigger, a `conditions`
// step on the media's kind with an `image` step under it), the API's validation error shown at the
// step and field it names, the JSON view kept in sync both ways, a dry run against a video (branch
// taken) and an image (not taken), enabled from the list's switch, then a real upload through the
// API whose workflow shows in the run history with every step completed and linked to the tasks
// page; axe-core on each page, nothing fetched from elsewhere, no console error.

let w: WebTest;
let videoMedia = '';
let imageMedia = '';
let automationId = '';

before(async () => {
  w = await startWebTest();
  const video = await putFile(
    w.t,
    w.owner.key,
    w.owner.projectId,
    'clip.mp4',
    fs.readFileSync(await fixture('video-mp4')),
  );
  const image = await putFile(
    w.t,
    w.owner.key,
    w.owner.projectId,
    'photo.png',
    fs.readFileSync(await fixture('image-png')),
  );
  videoMedia = video.media_id;
  imageMedia = image.media_id;
});
after(async () => {
  await w?.close();
});

/** The shell's switcher and user menu have their own a11y issue (see test/web/webhooks.test.ts). */
async function noSeriousA11y(page: Page, what: string) {
  const v = await axeViolations(page);
  assert.deepEqual(v, [], `${what}: ${JSON.stringify(v, null, 2)}`);
}

const api = (method: string, url: string, body?: unknown) =>
  w.t.call(method, url, { key: w.owner.key, ...(body === undefined ? {} : { body }) });

const step = (page: Page, path: string) => page.locator(`li[data-step="${path}"] > section`);

async function dryRun(page: Page, mediaId: string) {
  await page.getByLabel('Media', { exact: true }).selectOption(mediaId);
  await page.getByRole('button', { name: 'Dry run', exact: true }).click();
  const result = page.locator(`.dry-run-result[data-media="${mediaId}"]`);
  await result.waitFor();
  return result;
}

describe('the Automations pages in Chromium', { skip: !chromiumAvailable() && 'no chromium' }, () => {
  it('builds an automation with a conditions branch, with API errors at the field and JSON in sync', async () => {
    const { page } = w.page;
    const base = `${w.t.base}/app/p/${w.owner.projectId}`;
    await page.goto(`${base}/automations`);
    await page.getByRole('heading', { name: 'Automations', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'No automations' }).waitFor();
    await noSeriousA11y(page, 'automations, empty');

    await page.getByRole('link', { name: 'New automation' }).first().click();
    await page.getByRole('heading', { name: 'New automation', level: 1 }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Posters for videos');
    assert.equal(await page.getByLabel('When this event occurs').inputValue(), 'media.created');

    // Step 1: conditions (kind = video); under it, step 1.1: an image (a poster).
    await page.getByRole('button', { name: 'Add a step', exact: true }).click();
    await page.getByLabel('Kind of step 1', { exact: true }).selectOption('conditions');
    const s1 = step(page, 'workflow[0]');
    await s1.getByRole('button', { name: 'Add condition to Conditions of step 1' }).click();
    await s1.getByLabel('Property 1').fill('kind');
    await s1.getByLabel('Value 1').fill('video');
    await page.getByRole('button', { name: "Add a step when step 1's conditions hold" }).click();
    await page.getByLabel('Kind of step 1.1', { exact: true }).selectOption('image');
    const s11 = step(page, 'workflow[0].next[0]');
    await s11.getByText('Options of step 1.1').click();
    // The option form is generated from GET /tasks-config: image's width is a number input with its bounds.
    const width = s11.getByLabel('width', { exact: true });
    assert.equal(await width.getAttribute('type'), 'number');
    assert.equal(await width.getAttribute('min'), '1');
    await s11.getByLabel(/^ref/).fill('poster');
    await width.fill('0');

    // Builder → JSON.
    const json = page.getByLabel('The automation as the API takes it');
    const shown = JSON.parse(await json.inputValue());
    assert.deepEqual(shown.workflow, [
      {
        kind: 'conditions',
        conditions: [{ prop: 'kind', value: 'video' }],
        next: [{ kind: 'image', ref: 'poster', width: 0 }],
      },
    ]);
    assert.equal(shown.status, 'paused');
    await noSeriousA11y(page, 'builder');

    // The API refuses width 0: the error is shown at that step and field.
    await page.getByRole('button', { name: 'Create automation' }).click();
    await s11.getByRole('alert').getByText('workflow[0].next[0].width').waitFor();
    const widthError = s11.locator('[data-option="width"] .field-error');
    await widthError.waitFor();
    assert.match(await widthError.innerText(), /\S/);
    assert.equal(await width.getAttribute('aria-invalid'), 'true');
    assert.equal(await step(page, 'workflow[0]').getByRole('alert').count(), 0, 'the parent step has no error');
    assert.equal((await api('GET', '/automations')).json.meta.total, 0, 'nothing was created');
    // Chromium logs the API's 400 itself; nothing else.
    assert.deepEqual(w.page.consoleErrors, [
      'Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);
    w.page.consoleErrors.length = 0;

    // JSON → builder: fix the width in the JSON view; the step card follows.
    await json.fill(
      JSON.stringify(
        { ...shown, workflow: [{ ...shown.workflow[0], next: [{ ...shown.workflow[0].next[0], width: 96 }] }] },
        null,
        2,
      ),
    );
    await s11.getByText('Options of step 1.1').click();
    await until(
      async () => (await s11.getByLabel('width', { exact: true }).inputValue()) === '96',
      'the builder to show 96',
    );
    // Invalid JSON is said so and does not change the builder.
    await json.fill('{"trigger": ');
    await page.getByText(/Not valid JSON/).waitFor();
    assert.equal(await page.getByLabel('Kind of step 1.1', { exact: true }).inputValue(), 'image');
    await json.fill(
      JSON.stringify(
        { ...shown, workflow: [{ ...shown.workflow[0], next: [{ ...shown.workflow[0].next[0], width: 96 }] }] },
        null,
        2,
      ),
    );

    await page.getByRole('button', { name: 'Create automation' }).click();
    await page.waitForURL(/\/automations\/auto_[A-Za-z0-9]+$/);
    automationId = page.url().split('/').pop() ?? '';
    const saved = (await api('GET', `/automations/${automationId}`)).json.data;
    assert.equal(saved.name, 'Posters for videos');
    assert.equal(saved.status, 'paused');
    assert.deepEqual(saved.trigger, { kind: 'event', event: 'media.created' });
    assert.deepEqual(saved.workflow, [
      {
        kind: 'conditions',
        conditions: [{ prop: 'kind', value: 'video' }],
        next: [{ kind: 'image', ref: 'poster', width: 96 }],
      },
    ]);
    // The saved automation loads back into the builder.
    await page.getByLabel('Kind of step 1.1', { exact: true }).waitFor();
    assert.equal(await page.getByLabel('Kind of step 1', { exact: true }).inputValue(), 'conditions');
    await s11.getByText('Options of step 1.1').click();
    await page.setViewportSize({ width: 1280, height: 1500 });
    await page.evaluate('window.scrollTo(0, 0)');
    await screenshot(page, 'automation-builder');
    await page.setViewportSize({ width: 1280, height: 720 });
  });

  it('dry-runs it: the branch is taken for the video and not for the image', async () => {
    const { page } = w.page;
    const videoRun = await dryRun(page, videoMedia);
    const c = videoRun.locator('li[data-path="workflow[0]"]');
    assert.equal(await c.getAttribute('data-branch'), 'taken');
    assert.equal(await c.getAttribute('data-runs'), 'yes');
    assert.match(await c.locator('tbody tr').first().innerText(), /kind[\s\S]*video[\s\S]*video[\s\S]*passed/);
    assert.equal(await videoRun.locator('li[data-path="workflow[0].next[0]"]').getAttribute('data-runs'), 'yes');
    await videoRun.getByText('would start').waitFor();
    // The verdicts are shown on the builder's step cards too.
    assert.match(await step(page, 'workflow[0]').locator('[data-dry-runs]').innerText(), /would run, branch taken/);
    assert.equal(
      await step(page, 'workflow[0].next[0]').locator('[data-dry-runs]').getAttribute('data-dry-runs'),
      'yes',
    );
    await noSeriousA11y(page, 'dry run');
    await videoRun.scrollIntoViewIfNeeded();
    await screenshot(page, 'automation-dry-run');

    const imageRun = await dryRun(page, imageMedia);
    const ci = imageRun.locator('li[data-path="workflow[0]"]');
    assert.equal(await ci.getAttribute('data-branch'), 'not_taken');
    assert.match(await ci.locator('tbody tr').first().innerText(), /kind[\s\S]*video[\s\S]*image[\s\S]*failed/);
    assert.equal(await imageRun.locator('li[data-path="workflow[0].next[0]"]').getAttribute('data-runs'), 'no');
    assert.equal(
      await step(page, 'workflow[0].next[0]').locator('[data-dry-runs]').getAttribute('data-dry-runs'),
      'no',
    );

    // A dry run creates nothing.
    assert.equal((await api('GET', `/automations/${automationId}/runs`)).json.meta.total, 0);
    assert.equal((await api('GET', `/tasks?automation_id=${automationId}`)).json.data.length, 0);
  });

  it('is enabled from the list, runs on an upload, and its run history shows every step completed', async () => {
    const { page } = w.page;
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/automations`);
    const toggle = page.getByRole('switch', { name: 'Posters for videos enabled' });
    await toggle.waitFor();
    assert.equal(await toggle.getAttribute('aria-checked'), 'false');
    await noSeriousA11y(page, 'automations list');
    await toggle.click();
    await until(async () => (await toggle.getAttribute('aria-checked')) === 'true', 'the switch to turn on');
    assert.equal((await api('GET', `/automations/${automationId}`)).json.data.status, 'active');
    await screenshot(page, 'automations');

    const upload = await putFile(
      w.t,
      w.owner.key,
      w.owner.projectId,
      'new.mp4',
      fs.readFileSync(await fixture('video-mp4')),
    );
    await page.getByRole('link', { name: 'Run history' }).click();
    await page.getByRole('heading', { name: 'Run history' }).waitFor();
    const run = page.locator('li.run').first();
    await run.waitFor({ timeout: 30_000 });
    await page.locator('li.run[data-status="completed"]').first().waitFor({ timeout: 60_000 });
    const runs = (await api('GET', `/automations/${automationId}/runs`)).json.data;
    assert.equal(runs.length, 1);
    assert.equal(runs[0].status, 'completed');
    assert.deepEqual(runs[0].steps.map((s: { kind: string }) => s.kind).sort(), ['conditions', 'image']);
    const rows = run.locator('tbody tr');
    await until(async () => (await rows.count()) === 2, 'both steps listed');
    for (const s of runs[0].steps) {
      assert.equal(s.status, 'completed');
      assert.equal(await run.locator(`tr[data-step-task="${s.id}"]`).getAttribute('data-status'), 'completed');
    }
    const media = (await api('GET', `/media/${upload.media_id}`)).json.data;
    assert.ok(
      media.files.some((f: { ref?: string }) => f.ref === 'poster'),
      'the poster was made',
    );
    await noSeriousA11y(page, 'run history');
    await run.scrollIntoViewIfNeeded();
    await screenshot(page, 'automation-runs');

    // A step links to its task on the tasks page.
    const imageStep = runs[0].steps.find((s: { kind: string }) => s.kind === 'image');
    await run.getByRole('link', { name: imageStep.id }).click();
    await page.waitForURL((u) => u.pathname.endsWith('/tasks') && u.searchParams.get('task') === imageStep.id);

    assert.deepEqual(w.page.outside, [], 'no request left loopback');
    assert.deepEqual(w.page.consoleErrors, [], 'no console error');
  });

  it('opens from the command palette by id; a viewer sees it read-only', async () => {
    const { page } = w.page;
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/overview`);
    await page.getByRole('button', { name: /Search or jump to/ }).waitFor();
    await page.keyboard.press('Control+k');
    await page.getByRole('dialog', { name: 'Command palette' }).getByRole('combobox').fill(automationId);
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/automations/${automationId}$`));
    await page.getByRole('heading', { name: 'Posters for videos', level: 1 }).waitFor();

    await createUserInOrg(w.t.server.runtime.deps, {
      email: 'vera@example.com',
      name: 'Vera Viewer',
      password: PASSWORD,
      org: 'Acme', // the organisation first-run setup made (test/helpers/web.ts)
      role: 'viewer',
    });
    const viewer = await guardedPage(w.browser, w.t.base);
    const v = viewer.page;
    await v.goto(`${w.t.base}/app/sign-in`);
    await v.getByLabel('Email').fill('vera@example.com');
    await v.getByLabel('Password').fill(PASSWORD);
    await v.getByRole('button', { name: 'Sign in' }).click();
    await v.waitForURL(/\/overview$/);
    await v.goto(`${w.t.base}/app/p/${w.owner.projectId}/automations`);
    await v.getByRole('link', { name: 'Posters for videos' }).waitFor();
    assert.equal(await v.getByRole('switch').count(), 0, 'no switch for a viewer');
    assert.equal(await v.getByRole('link', { name: 'New automation' }).count(), 0);
    await v.getByRole('link', { name: 'Posters for videos' }).click();
    await v.getByLabel('Kind of step 1.1', { exact: true }).waitFor();
    assert.ok(await v.getByLabel('Kind of step 1.1', { exact: true }).isDisabled());
    assert.equal(await v.getByLabel('The automation as the API takes it').getAttribute('readonly'), '');
    assert.equal(await v.getByRole('button', { name: 'Save automation' }).count(), 0);
    assert.equal(await v.getByRole('button', { name: /Remove step/ }).count(), 0);
    await v.locator('li.run').first().waitFor();
    await noSeriousA11y(v, 'builder (viewer)');
    assert.deepEqual(viewer.outside, []);
    assert.deepEqual(viewer.consoleErrors, []);
    await viewer.context.close();
  });
});
