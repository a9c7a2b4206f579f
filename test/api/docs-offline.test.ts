import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { chromiumAvailable, guardedPage, launchBrowser } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { sqlitePassOnly } from '../helpers/passes.js';

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
// this test's half-minute of clicking (it runs in npm test on the embedded default).
const skip = !chromiumAvailable()
  ? 'Debian chromium is not installed'
  : sqlitePassOnly('the same page on either database');

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

interface Control {
  key: string;
  label: string;
  href: string | null;
}

/**
 * One round: every control on the page that is visible now and whose key is not in `done` gets
 * its own click, as the element's `click()` makes it, all in one go (Scalar re-renders the page
 * once after the round instead of after each of some 260 clicks: each re-render of this page
 * takes a 2-core machine 0.1–0.5 s). `key` tells one control from another by kind, name and
 * target, so the same control repeated in every operation (its "Copy URL", its client tabs) is
 * clicked once. A link that would leave the page is not clicked here but returned in `follow`,
 * to be checked and followed on its own.
 *
 * Not a pointer click: Scalar's layout keeps almost every control covered or moving (315 of 317
 * pointer clicks timed out waiting for it in one run), and the handlers are the same.
 */
async function clickRound(page: Page, done: string[]): Promise<{ clicked: Control[]; follow: Control[] }> {
  return page.$$eval(
    CONTROLS,
    (elements, done) => {
      const seen = new Set(done);
      // What nobody can see (display: none, collapsed) nobody can click; it is tried when it shows.
      const visible = elements.filter(
        (e) => (e as any).checkVisibility({ visibilityProperty: true, opacityProperty: true }) as boolean,
      );
      const clicked: Control[] = [];
      const follow: Control[] = [];
      for (const e of visible) {
        const label = (e.getAttribute('aria-label') ?? e.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 80);
        // "Test Request(get /files)", "Send get request to https://…/files": one control per operation, alike.
        const kind = label.replace(/\(.*?\)|\b(get|post|put|patch|delete) request to \S+/gi, '');
        const href = e.getAttribute('href');
        const key = `${e.tagName}|${e.getAttribute('role') ?? ''}|${kind}|${href ?? ''}`;
        if (seen.has(key)) continue;
        seen.add(key);
        if (href !== null && !href.startsWith('#')) {
          follow.push({ key, label, href });
          continue;
        }
        clicked.push({ key, label, href });
        (e as unknown as { click(): void }).click();
      }
      return { clicked, follow };
    },
    done,
  );
}

describe('/docs with every control clicked', { skip }, () => {
  it('offers no cloud feature and sends no request to another host', async () => {
    const { page, outside, context } = await guardedPage(browser, t.base);
    const clicked = new Set<string>();
    const labels = new Set<string>();
    const note = (c: Control): void => {
      clicked.add(c.key);
      labels.add(c.label);
      assert.ok(!CLOUD.test(c.label), `a cloud control is offered: "${c.label}"`);
      // Links may only stay on this server (or within the page).
      if (c.href !== null)
        assert.ok(
          c.href.startsWith('#') || c.href.startsWith('/') || c.href.startsWith(t.base),
          `a link leaves the server: ${c.href}`,
        );
    };
    try {
      await page.goto(`${t.base}/docs/`, { waitUntil: 'networkidle' });
      await page.getByText('Your first processed file').first().waitFor({ timeout: 20_000 });
      // Round after round, as clicks show new controls (groups opened, "Show all …", the request
      // client's Send once "Test Request" has opened it), until a round finds none new twice.
      let idle = 0;
      for (let round = 0; round < 40 && idle < 2 && clicked.size < MAX_CLICKS; round++) {
        const { clicked: pressed, follow } = await clickRound(page, [...clicked]);
        pressed.forEach(note);
        for (const link of follow) {
          note(link);
          await page.goto(new URL(link.href ?? '', page.url()).href, { waitUntil: 'networkidle' });
          if (!new URL(page.url()).pathname.startsWith('/docs'))
            await page.goto(`${t.base}/docs/`, { waitUntil: 'networkidle' });
        }
        idle = pressed.length + follow.length === 0 ? idle + 1 : 0;
        // What the clicks started (the Send's request, a group opening) has time to end.
        await page.waitForLoadState('networkidle');
        await page.waitForTimeout(200);
      }
      // The search: open it, type, pick a result.
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+k');
      await page.keyboard.type('task');
      await page.keyboard.press('Enter');
      await page.waitForTimeout(500);
      console.log(`clicked ${clicked.size} controls: ${[...labels].join(' · ')}`);
      assert.ok(clicked.size >= 100, `clicked only ${clicked.size} controls`);
      // The request client's Send is labelled "Send post request to https://…".
      for (const expected of [
        /^Send .*request to /,
        /Show Password/,
        /Download OpenAPI Document json/,
        /^curl/,
        /Test Request/,
      ])
        assert.ok(
          [...labels].some((l) => expected.test(l)),
          `a control matching ${expected} was among those clicked`,
        );
      await page.waitForLoadState('networkidle');
      assert.deepEqual(outside, [], 'no request left the server');
    } finally {
      await context.close();
    }
  });
});
