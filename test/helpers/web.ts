import { spawnSync } from 'node:child_process';
import { ROOT } from './paths.js';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { guardedPage, launchBrowser, type GuardedPage } from './browser.js';
import { startTestServer, type TestServer } from './server.js';

// Browser tests of the web application: the built app (dist/web, rebuilt when web/ is newer, once
// per run even with test files in parallel), a real server, first-run setup through the API, and a
// Chromium page that already holds the owner's session. Every request to another host is refused
// and recorded (`page.outside`), console errors are kept (`page.consoleErrors`).

const WEB = path.join(ROOT, 'web');
const BUILT = path.join(ROOT, 'dist/web/index.html');
const LOCK = path.join(ROOT, 'dist/.web-build.lock');

export const PASSWORD = 'correct horse battery staple';

function newestSource(dir: string): number {
  let newest = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    newest = Math.max(newest, fs.statSync(path.join(e.parentPath, e.name)).mtimeMs);
  }
  return newest;
}

function builtAt(): number {
  try {
    return fs.statSync(BUILT).mtimeMs;
  } catch {
    return 0;
  }
}

/** Builds dist/web when it is missing or older than web/ (another test process building: waits for it). */
export async function ensureWebBuilt(): Promise<void> {
  const stale = () => builtAt() < newestSource(WEB);
  if (!stale()) return;
  fs.mkdirSync(path.dirname(LOCK), { recursive: true });
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      break;
    } catch {
      // A lock older than two minutes belongs to a build that died.
      const age = Date.now() - (fs.statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 120_000) fs.rmSync(LOCK, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    if (!stale()) return;
    const res = spawnSync(process.execPath, [path.join(ROOT, 'scripts/build-web.mjs')], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    if (res.status !== 0)
      throw new Error(`the web application does not build (run npm run build:web):\n${res.stdout}\n${res.stderr}`);
  } finally {
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
}

export interface Owner {
  email: string;
  password: string;
  userId: string;
  orgId: string;
  projectId: string;
  /** The full-access key setup made. */
  key: string;
  /** The session setup started: the cookie (name=value) and its CSRF token. */
  cookie: string;
  csrf: string;
}

/** First-run setup through the API (the link the server logged): the first owner, organisation, project and key. */
export async function setUpOwner(t: TestServer, email = 'owner@example.com', name = 'Olivia Owner'): Promise<Owner> {
  if (!t.server.setupUrl) throw new Error('the server announced no setup link');
  const token = new URLSearchParams(new URL(t.server.setupUrl).hash.slice(1)).get('token');
  const res = await t.call('POST', '/auth/setup', {
    body: { token, email, name, password: PASSWORD, org: 'Acme', project: 'Website' },
  });
  if (res.status !== 201) throw new Error(`setup failed: ${res.status} ${res.text}`);
  const d = res.json.data;
  return {
    email,
    password: PASSWORD,
    userId: d.user.id,
    orgId: d.org.id,
    projectId: d.project.id,
    key: d.key.key,
    cookie: res.headers['set-cookie']!.split(';')[0]!,
    csrf: d.csrf_token,
  };
}

/** Puts a session cookie (name=value) into the page's browser context, as a sign-in would. */
export async function useSessionCookie(t: TestServer, page: GuardedPage, cookie: string): Promise<void> {
  const eq = cookie.indexOf('=');
  await page.context.addCookies([
    {
      name: cookie.slice(0, eq),
      value: cookie.slice(eq + 1),
      url: `${t.base}/`,
      secure: true,
      httpOnly: true,
      sameSite: 'Lax',
    },
  ]);
}

export interface WebTest {
  t: TestServer;
  browser: Browser;
  owner: Owner;
  /** A page signed in as the owner. */
  page: GuardedPage;
  /** A new guarded page with no session. */
  newPage(): Promise<GuardedPage>;
  close(): Promise<void>;
}

/** Built app + server + setup + browser with the owner's session. */
export async function startWebTest(env: Record<string, string> = {}): Promise<WebTest> {
  await ensureWebBuilt();
  const t = await startTestServer({
    MEDIAD_SIGN_IN_PER_MINUTE: '1000',
    MEDIAD_SIGN_IN_PER_MINUTE_PER_ADDRESS: '1000',
    ...env,
  });
  const owner = await setUpOwner(t);
  const browser = await launchBrowser();
  const page = await guardedPage(browser, t.base);
  await useSessionCookie(t, page, owner.cookie);
  return {
    t,
    browser,
    owner,
    page,
    newPage: () => guardedPage(browser, t.base),
    async close() {
      await browser.close();
      await t.stop();
    },
  };
}
