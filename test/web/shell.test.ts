import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { chromiumAvailable } from '../helpers/browser.js';
import { ensureWebBuilt, startWebTest, type WebTest } from '../helpers/web.js';

// The web application's frame: how mediad serves it (/app/, hashed immutable assets, the
// pre-compressed files, the SPA fallback, CSP), the auth guard, and the size of the first page.

const DIST = path.resolve('dist/web');
let w: WebTest;

before(async () => {
  w = await startWebTest();
});
after(() => w?.close());

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await request(`${w.t.base}${url}`, { headers, dispatcher: w.t.agent });
  const body = Buffer.from(await res.body.arrayBuffer());
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = String(v);
  return { status: res.statusCode, headers: flat, body };
}

describe('serving /app/', () => {
  it('answers index.html with a strict CSP for any app path, so client routes deep-link', async () => {
    for (const p of ['/app/', '/app/sign-in', '/app/p/prj_x/media/med_1']) {
      const res = await get(p, { accept: 'text/html' });
      assert.equal(res.status, 200, p);
      assert.match(res.headers['content-type']!, /^text\/html/);
      assert.equal(res.headers['cache-control'], 'no-cache');
      const csp = res.headers['content-security-policy']!;
      for (const d of [
        "default-src 'self'",
        "script-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
      ])
        assert.ok(csp.includes(d), `${d} in ${csp}`);
      assert.ok(!/script-src[^;]*unsafe/.test(csp), 'no unsafe script sources');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      const html = res.body.toString();
      assert.match(html, /<div id="root">/);
      assert.ok(!/<script(?![^>]*\bsrc=)[^>]*>/.test(html), 'no inline script');
    }
  });

  it('serves hashed assets immutable, pre-compressed by Accept-Encoding', async () => {
    const html = (await get('/app/')).body.toString();
    const js = /src="(\/app\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(js, 'the entry script is a hashed asset');
    const raw = fs.readFileSync(path.join(DIST, js.replace('/app/', '')));
    const br = await get(js, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(br.status, 200);
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(br.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(br.headers.vary, 'Accept-Encoding');
    assert.match(br.headers['content-type']!, /^text\/javascript/);
    assert.deepEqual(zlib.brotliDecompressSync(br.body), raw);
    const gz = await get(js, { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.deepEqual(zlib.gunzipSync(gz.body), raw);
    const plain = await get(js, { 'accept-encoding': 'identity' });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.deepEqual(plain.body, raw);
    const noBr = await get(js, { 'accept-encoding': 'br;q=0, gzip' });
    assert.equal(noBr.headers['content-encoding'], 'gzip');

    const missing = await get('/app/assets/nope-123.js');
    assert.equal(missing.status, 404);
    assert.equal(JSON.parse(missing.body.toString()).error.code, 'not_found');
    const traversal = await get('/app/assets/..%2F..%2Fpackage.json');
    assert.equal(traversal.status, 404);
  });

  it('sends browsers from / to /app/, and API clients get a 404', async () => {
    const browser = await get('/', { accept: 'text/html,application/xhtml+xml' });
    assert.equal(browser.status, 302);
    assert.equal(browser.headers.location, '/app/');
    const client = await get('/', { accept: 'application/json' });
    assert.equal(client.status, 404);
    assert.equal((await get('/app')).headers.location, '/app/');
  });

  it('answers /favicon.ico with the app’s icon', async () => {
    const icon = await get('/favicon.ico');
    assert.equal(icon.status, 200);
    assert.match(icon.headers['content-type']!, /^image\/svg\+xml/);
    assert.match(icon.body.toString(), /^<svg /);
  });

  it('loads the theme script and the icon from where Vite put them (named from public/, base added at build)', async () => {
    const html = (await get('/app/')).body.toString();
    assert.match(html, /<script src="\/app\/theme\.js"><\/script>/);
    assert.match(html, /<link rel="icon" href="\/app\/favicon\.svg"/);
    assert.equal((await get('/app/theme.js')).status, 200);
  });

  it('keeps the app out of /openapi.json', async () => {
    const doc = (await w.t.call('GET', '/openapi.json')).json;
    assert.ok(!Object.keys(doc.paths).some((p) => p === '/' || p.startsWith('/app')));
  });

  it('has at most 250 KB of gzipped JavaScript on the first page', async () => {
    await ensureWebBuilt();
    const html = fs.readFileSync(path.join(DIST, 'index.html'), 'utf8');
    const files = [...html.matchAll(/<(?:script|link)[^>]+(?:src|href)="\/app\/([^"]+\.js)"/g)].map((m) => m[1]!);
    assert.ok(files.length > 0);
    const bytes = files.reduce((n, f) => n + fs.statSync(path.join(DIST, `${f}.gz`)).size, 0);
    console.log(`initial JavaScript: ${files.length} files, ${(bytes / 1024).toFixed(1)} KB gzipped`);
    assert.ok(bytes <= 250 * 1024, `${bytes} bytes`);
  });
});

describe('the app shell in Chromium', { skip: !chromiumAvailable() && 'no chromium' }, () => {
  it('sends a visitor without a session to sign-in, with nothing fetched from elsewhere and no console error', async () => {
    const p = await w.newPage();
    await p.page.goto(`${w.t.base}/app/p/${w.owner.projectId}/overview`);
    await p.page.waitForURL(/\/app\/sign-in$/);
    await p.page.getByRole('heading', { name: 'Sign in to mediad' }).waitFor();
    assert.ok(await p.page.getByLabel('Email').isVisible());
    assert.deepEqual(p.outside, []);
    assert.deepEqual(p.consoleErrors, []);
    await p.context.close();
  });

  it('opens the project for a signed-in owner, with its sidebar and switcher', async () => {
    const { page, outside, consoleErrors } = w.page;
    await page.goto(`${w.t.base}/app/`);
    await page.waitForURL(new RegExp(`/app/p/${w.owner.projectId}/overview$`));
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'API keys' }).waitFor();
    assert.ok(await page.getByRole('button', { name: /Switch project/ }).isVisible());
    assert.deepEqual(outside, []);
    assert.deepEqual(consoleErrors, []);
  });
});
