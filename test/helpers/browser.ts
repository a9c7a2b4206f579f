import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

// Debian's Chromium, driven by playwright-core (which cannot download its own browsers here).
// Every request a page makes is seen: to the server under test it goes through; to anywhere
// else it is refused and recorded, so a test can assert that nothing left the machine.

export const CHROMIUM = process.env.MEDIAD_TEST_CHROMIUM ?? '/usr/bin/chromium';

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM);
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--no-first-run',
    ],
  });
}

export interface GuardedPage {
  context: BrowserContext;
  page: Page;
  /** URLs of requests to anywhere but `origin`, refused. */
  outside: string[];
  /** Messages the page logged as errors. */
  consoleErrors: string[];
}

/** A page that may only talk to `origin` (the server's https origin; its certificate is the test CA's). */
export async function guardedPage(browser: Browser, origin: string): Promise<GuardedPage> {
  const context = await browser.newContext({ ignoreHTTPSErrors: true });
  const outside: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`) || url === origin || url.startsWith('data:') || url.startsWith('blob:'))
      return route.continue();
    outside.push(url);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  return { context, page, outside, consoleErrors };
}
