import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { axeViolations } from '../helpers/a11y.js';
import { chromiumAvailable } from '../helpers/browser.js';
import { startWebTest, type WebTest } from '../helpers/web.js';
import { until } from './media-support.js';

// The command palette (Ctrl/⌘-K) in Chromium: jump to a media, a task's drawer and a webhook endpoint
// by id (read through the API), an id of another project refused, pages by name, the theme toggle
// saved to the account, keyboard only; axe-core on the open palette.

let w: WebTest;
before(async () => {
  w = await startWebTest();
});
after(() => w?.close());

const api = (method: string, url: string, body?: unknown, key = w.owner.key) =>
  w.t.call(method, url, { key, ...(body === undefined ? {} : { body }) });

describe('the command palette in Chromium', { skip: !chromiumAvailable() && 'no chromium' }, () => {
  it('opens with Ctrl-K and jumps to a media, a webhook endpoint and a page', async () => {
    const media = (await api('POST', '/media', { title: 'Palette target' })).json.data;
    const endpoint = (await api('POST', '/webhooks', { url: 'https://hooks.example.com/in', events: ['*'] })).json.data;
    const { page } = w.page;
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/overview`);
    await page.getByRole('button', { name: /Search or jump to/ }).waitFor();

    await page.keyboard.press('Control+k');
    const palette = page.getByRole('dialog', { name: 'Command palette' });
    const input = palette.getByRole('combobox');
    await input.waitFor();
    assert.ok(await input.evaluate((el) => el === el.ownerDocument.activeElement), 'the input has the focus');
    assert.deepEqual(await axeViolations(page), []);

    await input.fill(media.id);
    await palette.getByRole('option', { name: new RegExp(`Open media ${media.id}`) }).waitFor();
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/p/${w.owner.projectId}/media/${media.id}$`));
    await palette.waitFor({ state: 'detached' });

    await page.keyboard.press('Control+k');
    await input.fill(endpoint.id);
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/webhooks/${endpoint.id}$`));
    await page.getByRole('heading', { name: 'https://hooks.example.com/in' }).waitFor();

    // A page by name, chosen with the arrow keys.
    await page.keyboard.press('Control+k');
    await input.fill('ev');
    const options = await palette.getByRole('option').allTextContents();
    assert.ok(
      options.some((o) => o.startsWith('Events')),
      options.join(', '),
    );
    const index = options.findIndex((o) => o.startsWith('Events'));
    for (let i = 0; i < index; i++) await page.keyboard.press('ArrowDown');
    assert.equal(
      await palette.getByRole('option', { selected: true }).textContent(),
      options[index],
      'the arrow keys move the active option',
    );
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/p/${w.owner.projectId}/events$`));

    // Actions: "New API key" opens the keys page with its create dialog; "Upload media" the library
    // with the drop zone's button focused.
    await page.keyboard.press('Control+k');
    await input.fill('New API key');
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: 'Create an API key' }).waitFor();
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+k');
    await input.fill('Upload media');
    await palette.getByRole('option', { name: /Upload media/ }).click();
    await page.waitForURL(new RegExp(`/p/${w.owner.projectId}/media\\?upload=1$`));
    await page.getByRole('button', { name: 'Choose files' }).waitFor();
    await until(
      async () =>
        (await page.evaluate<string | null>('document.activeElement?.textContent ?? null')) === 'Choose files',
      'the drop zone button focused',
    );

    // Escape closes it.
    await page.keyboard.press('Control+k');
    await input.waitFor();
    await page.keyboard.press('Escape');
    await palette.waitFor({ state: 'detached' });
    assert.deepEqual(w.page.outside, []);
    assert.deepEqual(w.page.consoleErrors, []);
  });

  it('refuses an id of another project, and toggles the theme saved to the account', async () => {
    const elsewhere = await w.t.key('Other org', 'Other project');
    const foreign = (await api('POST', '/media', { title: 'Not yours' }, elsewhere.key)).json.data;
    const { page } = w.page;
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/overview`);
    await page.getByRole('button', { name: /Search or jump to/ }).click();
    const palette = page.getByRole('dialog', { name: 'Command palette' });
    await palette.getByRole('combobox').fill(foreign.id);
    await page.keyboard.press('Enter');
    await palette.getByRole('alert').getByText(`Nothing with the id ${foreign.id} in this project.`).waitFor();
    assert.match(page.url(), /\/overview$/, 'the page stays');
    // The API's 404 is the only console message (Chromium logs failed requests).
    assert.ok(
      w.page.consoleErrors.every((m) => /404/.test(m)),
      w.page.consoleErrors.join('\n'),
    );
    w.page.consoleErrors.length = 0;

    const dark = async () => /\bdark\b/.test((await page.locator('html').getAttribute('class')) ?? '');
    const before = await dark();
    await palette.getByRole('combobox').fill('toggle dark');
    await page.keyboard.press('Enter');
    await palette.waitFor({ state: 'detached' });
    assert.equal(await dark(), !before);
    const session = await w.t.call('GET', '/auth/session', { headers: { cookie: w.owner.cookie } });
    assert.equal(session.json.data.user.theme, before ? 'light' : 'dark', 'saved to the account');
    assert.deepEqual(w.page.outside, []);
    assert.deepEqual(w.page.consoleErrors, []);
  });
});
