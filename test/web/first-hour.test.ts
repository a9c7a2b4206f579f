import assert from 'node:assert/strict';
import { MEDIAD, ROOT } from '../helpers/paths.js';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, chromiumAvailable } from '../helpers/browser.js';
import { freePort } from '../helpers/server.js';
import { ensureWebBuilt, PASSWORD } from '../helpers/web.js';

// A new user's first hour in the browser (issue 21): `mediad serve` started fresh in a directory of
// its own, as `npm start` starts it from a checkout; its CA installed into Chromium's NSS database
// with the README's own line; the setup link taken from the server's log and opened in a Chromium
// that trusts nothing else (no certificate errors ignored); mediad set up in the page; then the
// overview's curl and Node.js snippets, copied from the page, run as they are with the key the
// setup showed in MEDIAD_API_KEY — to a completed task made from a local file. Nothing the page
// asks for leaves the server.

const run = promisify(execFile);

let dir: string;
let home: string;
let port: number;
let server: ChildProcess;
let log = '';
let browser: Browser | undefined;

before(async () => {
  await ensureWebBuilt();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-first-hour-'));
  home = path.join(dir, 'home');
  await fs.mkdir(home);
  // The checkout's packages, for the mediad command run in this directory (from source, with tsx).
  await fs.symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  port = await freePort();
  server = spawn(process.execPath, [...MEDIAD, 'serve'], {
    cwd: dir,
    env: { ...process.env, MEDIAD_HOST: '127.0.0.1', MEDIAD_PORT: String(port), MEDIAD_WORKER_CONCURRENCY: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  server.stdout!.on('data', (c: Buffer) => (log += c.toString()));
  const deadline = Date.now() + 60_000;
  while (!log.includes('"setupUrl"')) {
    if (server.exitCode !== null || Date.now() > deadline) throw new Error(`no setup link logged:\n${log}`);
    await new Promise((r) => setTimeout(r, 200));
  }
});
after(async () => {
  await browser?.close();
  if (server.exitCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  await fs.rm(dir, { recursive: true, force: true });
});

/** A line of the README's "Trusting the local certificate authority" that starts with `prefix`. */
async function readmeCommand(prefix: string): Promise<string> {
  const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
  const part = readme.slice(readme.indexOf('## Trusting the local'));
  const found = part.split('\n').find((l) => l.includes(prefix));
  const command = found && /`([^`]*certutil[^`]*)`/.exec(found)?.[1];
  assert.ok(command, `the README's ${prefix} line`);
  return command;
}

describe('the first hour in Chromium', { skip: !chromiumAvailable() && 'no chromium' }, () => {
  it('trusts the CA as the README says, follows the logged setup link, and runs the overview’s snippets as copied', async () => {
    // The logged link, from the JSON line the server wrote (its output is a pipe here).
    const setupUrl = log
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { setupUrl?: string })
      .find((r) => r.setupUrl)!.setupUrl!;
    assert.match(setupUrl, new RegExp(`^https://localhost:${port}/app/setup#token=`));

    // Chromium on Linux trusts what its NSS database in $HOME holds: the README's line puts the CA there.
    const trust = await readmeCommand('Chrome, Chromium, Edge on Linux');
    await run('bash', ['-c', trust], { cwd: dir, env: { ...process.env, HOME: home } });

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      env: { ...process.env, HOME: home },
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
    });
    const base = `https://localhost:${port}`;
    const context = await browser.newContext(); // certificate errors are not ignored
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    const outside: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${base}/`) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
      outside.push(url);
      return route.abort('blockedbyclient');
    });
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));

    await page.goto(setupUrl);
    await page.getByRole('heading', { name: 'Set up mediad' }).waitFor();
    await page.getByLabel('Your name').fill('Nia New');
    await page.getByLabel('Email').fill('nia@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Organisation').fill('Nia Media');
    await page.getByLabel('First project').fill('Site');
    await page.getByRole('button', { name: 'Create owner and project' }).click();
    await page.getByRole('heading', { name: 'mediad is ready' }).waitFor();
    const key = (await page.locator('[data-secret]').textContent()) ?? '';
    assert.match(key, /^mdk_/);
    await page.getByRole('button', { name: /Continue to Site/ }).click();
    await page.waitForURL(/\/app\/p\/prj_\w+\/overview$/);
    const project = /\/p\/(prj_\w+)\//.exec(page.url())![1]!;

    // The snippets, as the copy buttons give them.
    const copied = async (tab: string) => {
      await page.getByRole('tab', { name: tab }).click();
      await page.getByRole('tabpanel').getByRole('button', { name: 'Copy snippet' }).click();
      return page.evaluate<string, undefined>('navigator.clipboard.readText()', undefined);
    };
    const curl = await copied('curl');
    const js = await copied('JavaScript');
    for (const snippet of [curl, js]) {
      assert.ok(snippet.includes(project), 'the project is filled in');
      assert.ok(snippet.includes('data/tls/ca.crt'), 'the local CA, as a default install has it');
      assert.ok(!snippet.includes('example.com'), 'no example.com clip');
    }

    // Run as copied, from the checkout, with the key in MEDIAD_API_KEY as the overview says.
    const env = { ...process.env, MEDIAD_API_KEY: key };
    const shell = await run('bash', ['-c', curl], { cwd: dir, env, timeout: 120_000 });
    assert.match(shell.stdout, /^file: file_\w+$/m, shell.stderr);
    assert.match(shell.stdout, /"status":"completed"/);
    await fs.writeFile(path.join(dir, 'first-task.mjs'), js);
    const command = /^\/\/ {3}(.+)$/m.exec(js)![1]!;
    assert.equal(command, 'NODE_EXTRA_CA_CERTS=data/tls/ca.crt node first-task.mjs');
    const node = await run('bash', ['-c', command], { cwd: dir, env, timeout: 120_000 });
    assert.match(
      node.stdout,
      new RegExp(`^completed ${base}/d/${project}/uploads/file_\\w+\\.webp$`, 'm'),
      node.stderr,
    );

    assert.deepEqual(outside, [], 'no request left the server');
    assert.deepEqual(consoleErrors, []);
    await context.close();
  });
});
