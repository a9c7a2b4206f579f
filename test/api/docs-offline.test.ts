import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { chromiumAvailable, guardedPage, launchBrowser } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// /docs makes no request off the server, whatever one clicks (issue 21): Scalar's cloud features
// (Generate MCP, Ask AI, Deploy, Share, Configure, the client app) are turned off in its
// configuration, and this test clicks every control the page shows — the sidebar, each operation,
// the search, the client libraries, the request client and its Send button, the downloads, the
// theme switch — round after round as new ones appear, in Chromium with every request to another
// host refused and recorded.

const CLOUD = /generate mcp|ask ai|^deploy|^share|^configure|open api client|upload document|powered by scalar/i;
const CONTROLS =
  'button, [role=button], [role=tab], [role=menuitem], [role=option], [role=switch], [role=checkbox], summary, a[href], input[type=checkbox]';
/** A bound on clicks, so a page that keeps making controls cannot hold the test forever. */
const MAX_CLICKS = 400;

// The page and the hosts it may reach do not depend on the database, and the API calls its Send
// buttons make are tested on both databases elsewhere: the PostgreSQL pass of the API suite skips
// this test's two to four minutes of clicking (it runs in npm test on the embedded default).
const skip = !chromiumAvailable()
  ? 'Debian chromium is not installed'
  : process.env.MEDIAD_TEST_DATABASE_URL
    ? 'the same page on either database: run in the SQLite pass'
    : false;

let t: TestServer;
let browser: Browser;

before(async () => {
  if (skip) return;
  t = await startTestServer({ MEDIAD_WORKER_CONCURRENCY: '0' });
  browser = await launchBrowser();
});
after(async () => {
  if (skip) return;
  await browser.close();
  await t.stop();
});

/**
 * The controls on the page now. Each element gets a number (data-probe) so it can be clicked
 * again after the DOM moved; `key` tells one control from another by kind, name and target, so
 * the same control repeated in every operation (its "Copy URL", its client tabs) is clicked once.
 */
async function describeControls(
  page: Page,
): Promise<{ probe: string; key: string; label: string; href: string | null; visible: boolean }[]> {
  return page.$$eval(CONTROLS, (elements) => {
    const w = globalThis as unknown as { probes?: number };
    return elements.map((e) => {
      const el = e as unknown as { dataset: Record<string, string | undefined> };
      el.dataset.probe ??= String((w.probes = (w.probes ?? 0) + 1));
      const label = (e.getAttribute('aria-label') ?? e.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 80);
      // "Test Request(get /files)", "Send get request to https://…/files": one control per operation, alike.
      const kind = label.replace(/\(.*?\)|\b(get|post|put|patch|delete) request to \S+/gi, '');
      const key = `${e.tagName}|${e.getAttribute('role') ?? ''}|${kind}|${e.getAttribute('href') ?? ''}`;
      // What nobody can see (display: none, collapsed) nobody can click; it is tried when it shows.
      const visible = (e as any).checkVisibility({ visibilityProperty: true, opacityProperty: true }) as boolean;
      return { probe: el.dataset.probe, key, label, href: e.getAttribute('href'), visible };
    });
  });
}

/**
 * A real click first, then the control's own click event. Scalar's layout keeps almost every
 * control covered or moving (315 of 317 real clicks timed out at 400 ms in one run), so the real
 * click gets a short wait: at 400 ms those waits cost a minute of the test's 3.4, for the same events.
 */
async function press(control: Locator): Promise<void> {
  try {
    await control.click({ timeout: 150 });
  } catch {
    // Covered by a dialog or scrolled away: its own click handler still runs. (Gone: nothing to do.)
    await control.dispatchEvent('click', undefined, { timeout: 400 }).catch(() => {});
  }
}

describe('/docs with every control clicked', { skip }, () => {
  it('offers no cloud feature and sends no request to another host', async () => {
    const { page, outside, context } = await guardedPage(browser, t.base);
    try {
      await page.goto(`${t.base}/docs/`, { waitUntil: 'networkidle' });
      await page.getByText('Your first processed file').first().waitFor({ timeout: 20_000 });
      const clicked = new Set<string>();
      const labels = new Set<string>();
      for (let round = 0; round < 8 && clicked.size < MAX_CLICKS; round++) {
        const fresh = (await describeControls(page)).filter((c) => c.visible && !clicked.has(c.key));
        if (fresh.length === 0) break;
        for (const c of fresh) {
          if (clicked.size >= MAX_CLICKS || clicked.has(c.key)) continue;
          clicked.add(c.key);
          labels.add(c.label);
          assert.ok(!CLOUD.test(c.label), `a cloud control is offered: "${c.label}"`);
          // Links may only stay on this server (or within the page).
          if (c.href !== null)
            assert.ok(
              c.href.startsWith('#') || c.href.startsWith('/') || c.href.startsWith(t.base),
              `a link leaves the server: ${c.href}`,
            );
          await press(page.locator(`[data-probe="${c.probe}"]`));
          // A click that left /docs (a same-origin link) comes back to keep clicking.
          if (!new URL(page.url()).pathname.startsWith('/docs'))
            await page.goto(`${t.base}/docs/`, { waitUntil: 'networkidle' });
        }
        await page.keyboard.press('Escape');
      }
      // The search: open it, type, pick a result.
      await page.keyboard.press('Control+k');
      await page.keyboard.type('task');
      await page.keyboard.press('Enter');
      await page.waitForTimeout(500);
      console.log(`clicked ${clicked.size} controls: ${[...labels].join(' · ')}`);
      assert.ok(clicked.size >= 100, `clicked only ${clicked.size} controls`);
      for (const expected of ['Send', 'Show Password', 'Download OpenAPI Document json', 'curl', 'Test Request'])
        assert.ok(
          [...labels].some((l) => l.includes(expected)),
          `the ${expected} control was among those clicked`,
        );
      await page.waitForLoadState('networkidle');
      assert.deepEqual(outside, [], 'no request left the server');
    } finally {
      await context.close();
    }
  });
});
