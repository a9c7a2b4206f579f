import fs from 'node:fs';
import { ROOT } from './paths.js';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Page } from 'playwright-core';

// axe-core in a page of the web application, and the screenshots the README shows. The app's
// CSP refuses inline scripts, so axe is evaluated through the DevTools protocol (page.evaluate),
// which the CSP does not govern, rather than injected as a <script>.

const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  /** CSS selectors of the offending elements. */
  nodes: string[];
}

/**
 * axe-core's violations on the page as it is now, of the given impacts (default: serious and critical),
 * outside the elements matched by `exclude` (CSS selectors).
 */
export async function axeViolations(
  page: Page,
  { impacts = ['serious', 'critical'], exclude = [] }: { impacts?: string[]; exclude?: string[] } = {},
): Promise<AxeViolation[]> {
  if (!(await page.evaluate<boolean, undefined>('typeof window.axe === "object"', undefined))) await page.evaluate(AXE);
  const all = await page.evaluate<AxeViolation[], undefined>(
    `axe.run({ include: [['html']], exclude: ${JSON.stringify(exclude.map((e) => [e]))} }, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({
      id: v.id, impact: v.impact ?? null, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')),
    })))`,
    undefined,
  );
  return all.filter((v) => v.impact !== null && impacts.includes(v.impact));
}

export const SCREENSHOTS = path.join(ROOT, 'docs/screenshots');

/**
 * Writes docs/screenshots/<name>.png (docs/web-app.md shows some of them) when MEDIAD_SCREENSHOTS=1,
 * so that an ordinary test run leaves the committed pictures alone.
 */
export async function screenshot(page: Page, name: string, { fullPage = false } = {}): Promise<void> {
  if (process.env.MEDIAD_SCREENSHOTS !== '1') return;
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage });
}
