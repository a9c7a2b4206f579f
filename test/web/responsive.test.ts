import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { axeViolations, screenshot } from '../helpers/a11y.js';
import { chromiumAvailable } from '../helpers/browser.js';
import { fixture } from '../helpers/fixtures.js';
import { startWebTest, type WebTest } from '../helpers/web.js';
import { putFile, until } from './media-support.js';

// The web app at a large screen (1920×1080) and a phone (390×844): every main page loads, axe-core
// finds no serious or critical violation, at 390 px nothing is wider than the screen (tables scroll
// in their own box) and the navigation folds behind a "Menu" button; at 1920 px the library's grid
// has more columns than at 1280 px. One server, one browser, one page for every visit.

const WIDE = { width: 1920, height: 1080 };
const NARROW = { width: 390, height: 844 };
const PAGES = [
  'overview',
  'media',
  'tasks',
  'automations',
  'events',
  'webhooks',
  'requests',
  'usage',
  'queue',
  'system',
  'keys',
  'settings',
  'admin',
  'audit',
];
/** The pages whose pictures docs/web-app.md shows at both widths. */
const PICTURED = new Set(['overview', 'media', 'tasks', 'requests']);
/** The shell's switcher and user menu are checked by the shell's tests (see webhooks.test.ts). */
const AXE = { exclude: ['.switcher', '.user-button'] };

let w: WebTest;
before(async () => {
  w = await startWebTest();
  const png = fs.readFileSync(await fixture('image-png'));
  for (let i = 0; i < 6; i++) await putFile(w.t, w.owner.key, w.owner.projectId, `square-${i}.png`, png);
});
after(async () => {
  await w?.close();
});

const url = (p: string) => `${w.t.base}/app/p/${w.owner.projectId}/${p}`;

/** Opens a project page and waits until its heading is shown and nothing is loading. */
async function visit(page: Page, p: string): Promise<void> {
  await page.goto(url(p));
  await page.locator('main h1').first().waitFor();
  await until(async () => (await page.locator('main .skeleton').count()) === 0, `${p} to load`);
}

/** How far the page is wider than the window (0: no sideways scrolling of the page itself). */
function overflow(page: Page): Promise<number> {
  return page.evaluate<number, undefined>(
    'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    undefined,
  );
}

/** The elements that stick out on the right (outside a box that scrolls), to name in a failure. */
function overflowing(page: Page): Promise<string[]> {
  return page.evaluate<string[], undefined>(
    `[...document.querySelectorAll('body *')].filter((e) => {
      if (e.getBoundingClientRect().right <= document.documentElement.clientWidth + 1) return false;
      for (let a = e.parentElement; a; a = a.parentElement) if (getComputedStyle(a).overflowX !== 'visible') return false;
      return true;
    }).slice(0, 6).map((e) => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ').join('.') : '') + ' ' + Math.round(e.getBoundingClientRect().right))`,
    undefined,
  );
}

function gridColumns(page: Page): Promise<number> {
  return page.evaluate<number, undefined>(
    "getComputedStyle(document.querySelector('.media-grid')).gridTemplateColumns.split(' ').filter(Boolean).length",
    undefined,
  );
}

describe('the web app at 1920 and 390 px wide', { skip: !chromiumAvailable() && 'no Chromium' }, () => {
  it('the library fills a large screen: more grid columns at 1920 px than at 1280 px', async () => {
    const { page } = w.page;
    await page.setViewportSize({ width: 1280, height: 800 });
    await visit(page, 'media');
    const at1280 = await gridColumns(page);
    await page.setViewportSize(WIDE);
    const at1920 = await gridColumns(page);
    assert.ok(at1920 > at1280, `columns at 1920: ${at1920}, at 1280: ${at1280}`);
    const main = await page.locator('main').boundingBox();
    const grid = await page.locator('.media-grid').boundingBox();
    assert.ok(main && grid && grid.width > main.width * 0.9, 'the grid spans the main column');
  });

  for (const [label, size] of [
    ['1920', WIDE],
    ['390', NARROW],
  ] as const) {
    it(`every main page at ${label} px: axe-core, no page-wide overflow at 390 px`, async () => {
      const { page } = w.page;
      await page.setViewportSize(size);
      const wider: string[] = [];
      for (const p of PAGES) {
        await visit(page, p);
        assert.deepEqual(await axeViolations(page, AXE), [], `${p} at ${label} px`);
        if (size === NARROW && (await overflow(page)) > 0) wider.push(`${p}: ${(await overflowing(page)).join(', ')}`);
        if (PICTURED.has(p)) await screenshot(page, `${p === 'media' ? 'library-grid' : p}-${label}`);
      }
      assert.deepEqual(wider, [], 'pages wider than 390 px');
      await page.goto(`${w.t.base}/app/account`);
      await page.locator('main h1').first().waitFor();
      assert.deepEqual(await axeViolations(page, AXE), [], `account at ${label} px`);
      if (size === NARROW)
        assert.equal(await overflow(page), 0, `account is wider than 390 px: ${(await overflowing(page)).join(', ')}`);
      // Signed out: the sign-in page.
      const anon = await w.newPage();
      await anon.page.setViewportSize(size);
      await anon.page.goto(`${w.t.base}/app/sign-in`);
      await anon.page.locator('main h1').first().waitFor();
      assert.deepEqual(await axeViolations(anon.page), [], `sign-in at ${label} px`);
      if (size === NARROW) assert.equal(await overflow(anon.page), 0, 'sign-in is wider than 390 px');
      await anon.context.close();
    });
  }

  it('at 390 px the navigation folds behind a Menu button that opens and closes it', async () => {
    const { page } = w.page;
    await page.setViewportSize(NARROW);
    await visit(page, 'overview');
    const nav = page.getByRole('navigation', { name: 'Project' });
    const menu = page.getByRole('button', { name: 'Menu', exact: true });
    assert.equal(await nav.isVisible(), false, 'the sidebar is folded');
    assert.equal(await menu.getAttribute('aria-expanded'), 'false');
    await menu.click();
    assert.equal(await menu.getAttribute('aria-expanded'), 'true');
    await nav.waitFor();
    assert.deepEqual(await axeViolations(page, AXE), [], 'the open menu');
    await screenshot(page, 'menu-390');
    await page.getByRole('button', { name: 'Close menu' }).click();
    await nav.waitFor({ state: 'hidden' });
    await menu.click();
    await nav.getByRole('link', { name: 'Tasks' }).click();
    await page.waitForURL(/\/tasks$/);
    await nav.waitFor({ state: 'hidden' });

    await page.setViewportSize(WIDE);
    assert.equal(await menu.isVisible(), false, 'no Menu button on a large screen');
    assert.equal(await nav.isVisible(), true, 'the sidebar is shown');
    assert.deepEqual(w.page.outside, []);
    assert.deepEqual(w.page.consoleErrors, []);
  });
});
