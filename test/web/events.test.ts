import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { axeViolations, screenshot } from '../helpers/a11y.js';
import { chromiumAvailable } from '../helpers/browser.js';
import { startWebTest, type WebTest } from '../helpers/web.js';

// The Events page in Chromium: the events this test causes through the API (media created, updated,
// deleted), newest first with their data as JSON and links to the objects they name; the type filter
// kept in the URL (one type, and a resource's every type); one event opened by id; pagination; axe-core.

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
const api = (method: string, url: string, body?: unknown) =>
  w.t.call(method, url, { key: w.owner.key, ...(body === undefined ? {} : { body }) });

describe('the Events page in Chromium', { skip: !chromiumAvailable() && 'no chromium' }, () => {
  it('lists the events the test caused, filters by type in the URL, links to the media', async () => {
    const kept = (await api('POST', '/media', { title: 'Kept clip' })).json.data;
    const gone = (await api('POST', '/media', { title: 'Gone clip' })).json.data;
    assert.equal((await api('PATCH', `/media/${kept.id}`, { title: 'Kept clip, renamed' })).status, 200);
    assert.equal((await api('DELETE', `/media/${gone.id}`)).status, 200);
    const all = (await api('GET', '/events?limit=100')).json.data;
    assert.ok(all.length >= 4);

    const { page } = w.page;
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/events`);
    const list = page.getByRole('list', { name: 'Events' });
    await list.waitFor();
    const shown = await list.locator(':scope > li').evaluateAll((els) => els.map((e) => e.getAttribute('data-event')));
    assert.deepEqual(
      shown,
      all.slice(0, 25).map((e: { id: string }) => e.id),
      'newest first, as the API lists them',
    );
    assert.equal(
      await list.locator(':scope > li').first().locator('.badge').first().textContent(),
      all[0].type,
      'the newest is first',
    );
    assert.equal(all[0].type, 'media.deleted');
    assert.ok(
      await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Events' }).isVisible(),
    );
    assert.deepEqual(await axeViolations(page), []);
    await screenshot(page, 'events');

    // Filter: one type.
    await page.getByLabel('Type').selectOption('media.updated');
    await page.waitForURL(/type=media\.updated/);
    await until(async () => (await list.locator(':scope > li').count()) === 1);
    const updated = all.find((e: { type: string }) => e.type === 'media.updated');
    const card = list.locator(`[data-event="${updated.id}"]`);
    await card.locator('summary').click();
    const data = JSON.parse((await card.locator('pre.json').textContent()) ?? '');
    assert.equal(data.title, 'Kept clip, renamed');
    assert.equal(data.id, kept.id);

    // The filter is in the URL: a reload keeps it.
    await page.reload();
    await list.waitFor();
    assert.equal(await page.getByLabel('Type').inputValue(), 'media.updated');
    assert.equal(await list.locator(':scope > li').count(), 1);

    // A resource's every type.
    await page.getByLabel('Type').selectOption('media.*');
    await page.waitForURL(/type=media\.\*|type=media\.%2A/);
    const media = all.filter((e: { type: string }) => e.type.startsWith('media.'));
    await until(async () => (await list.locator(':scope > li').count()) === media.length);
    // The deleted media's event names it but has no link (no page left); the kept one links to its page.
    const deleted = list.locator(`[data-event="${all[0].id}"]`);
    assert.equal(await deleted.getByRole('link', { name: new RegExp(gone.id) }).count(), 0);
    await card.getByRole('link', { name: new RegExp(kept.id) }).click();
    await page.waitForURL(new RegExp(`/media/${kept.id}$`));

    assert.deepEqual(w.page.outside, []);
    assert.deepEqual(w.page.consoleErrors, []);
  });

  it('opens one event by id and pages through a long log', async () => {
    for (let i = 0; i < 30; i++) await api('POST', '/media', { title: `Bulk ${i}` });
    const all = (await api('GET', '/events?type=media.created&limit=100')).json;
    const total = all.meta.total;
    assert.ok(total >= 32);
    const { page } = w.page;
    const oldest = all.data.at(-1);
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/events?type=media.created&event=${oldest.id}`);
    const asked = page.getByRole('region', { name: 'The event asked for' });
    await asked.locator(`[data-event="${oldest.id}"]`).waitFor();
    assert.ok(await asked.locator('pre.json').isVisible(), 'the asked-for event opens with its data');

    const pager = page.getByRole('navigation', { name: 'Pages' });
    await pager.getByText(`Page 1 of ${Math.ceil(total / 25)}`).waitFor();
    await pager.getByRole('link', { name: 'Older →' }).click();
    await page.waitForURL(/page=2/);
    await pager.getByText(`Page 2 of ${Math.ceil(total / 25)}`).waitFor();
    const second = await page
      .getByRole('list', { name: 'Events' })
      .locator(':scope > li')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-event')));
    assert.deepEqual(
      second,
      all.data.slice(25, 50).map((e: { id: string }) => e.id),
    );
    assert.ok(!page.url().includes('event='), 'paging leaves the single event');
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(w.page.outside, []);
    assert.deepEqual(w.page.consoleErrors, []);
  });
});
