import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startOrigin, type Origin } from '../helpers/origin.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// POST /files must refuse URLs that lead anywhere but the operator's allow-list, before any
// connection. Every URL below targets loopback only (or nothing): the non-loopback classes
// (link-local, private, CGNAT, public ...) are covered by the guard's own decision in
// test/unit/net-*.test.ts, without connecting.

let t: TestServer;
let trusted: Origin; // the only origin in MEDIAD_ALLOWED_URL_HOSTS
let other: Origin; // another loopback port: must never be reached
let v6: { port: number; hits: string[]; close(): Promise<void> } | null; // a listener on [::1], when the host has IPv6
let key: string;

/** A minimal origin on ::1 that records hits (startOrigin listens on 127.0.0.1 only). */
async function startV6(): Promise<typeof v6> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(404).end();
  });
  const ok = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(0, '::1', () => resolve(true));
  });
  if (!ok) return null;
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function fileCount(): Promise<number> {
  const row = await t.server.runtime.deps.db
    .selectFrom('files')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function tmpFiles(): Promise<string[]> {
  const entries = await fs.readdir(path.join(t.dataDir, 'tmp'), { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => e.name);
}

before(async () => {
  trusted = await startOrigin();
  other = await startOrigin();
  v6 = await startV6();
  t = await startTestServer({ MEDIAD_ALLOWED_URL_HOSTS: trusted.host });
  key = (await t.key('acme', 'prod')).key;
});
after(async () => {
  await t.stop();
  await trusted.close();
  await other.close();
  await v6?.close();
});

const portOf = (o: Origin) => Number(new URL(o.base).port);
const postFile = (url: string) => t.call('POST', '/files', { key, body: { url } });

describe('SSRF guard through POST /files', () => {
  it('fetches from the allow-listed origin (the control for the refusals below)', async () => {
    const res = await postFile(trusted.url('/fixtures/image-png'));
    assert.equal(res.status, 201, res.text);
    assert.ok(trusted.hits.includes('/fixtures/image-png'));
    const viaRedirect = await postFile(trusted.url(`/redirect?to=${encodeURIComponent('/fixtures/image-png')}`));
    assert.equal(viaRedirect.status, 201, `a redirect within the trusted origin is followed: ${viaRedirect.text}`);
  });

  it('refuses loopback addresses outside the allow-list without connecting', async () => {
    const before = await fileCount();
    const trustedHits = trusted.hits.length;
    const p = '/fixtures/image-png';
    const urls = [
      other.url(p), // same address, port not allowed
      `http://localhost:${portOf(other)}${p}`,
      `http://localhost:${portOf(trusted)}${p}`, // the trusted port, but by another name
      `http://[::ffff:127.0.0.1]:${portOf(trusted)}${p}`, // IPv4-mapped form of the trusted address
      `http://[::ffff:7f00:1]:${portOf(other)}${p}`,
      `http://0.0.0.0:${portOf(trusted)}${p}`, // "this host": Linux connects it to loopback
      `http://2130706433:${portOf(other)}${p}`, // 127.0.0.1 in decimal
      `http://127.0.0.2:${portOf(trusted)}${p}`,
      `http://[::1]:${v6?.port ?? portOf(other)}${p}`,
      `http://[::]:${v6?.port ?? portOf(other)}${p}`,
    ];
    for (const url of urls) {
      const res = await postFile(url);
      assert.equal(res.status, 422, `${url}: ${res.text}`);
      assert.equal(res.json.error.code, 'source_refused', url);
      assert.match(res.json.error.message, /refusing to fetch/, url);
    }
    assert.deepEqual(other.hits, [], 'the untrusted origin was never contacted');
    assert.equal(trusted.hits.length, trustedHits, 'nor was the trusted one under another address');
    assert.deepEqual(v6?.hits ?? [], []);
    assert.equal(await fileCount(), before);
  });

  it('refuses a redirect from the trusted origin into another loopback port', async () => {
    const target = other.url('/fixtures/image-png');
    const res = await postFile(trusted.url(`/redirect?to=${encodeURIComponent(target)}`));
    assert.equal(res.status, 422, res.text);
    assert.equal(res.json.error.code, 'source_refused');
    const mapped = await postFile(
      trusted.url(
        `/redirect?to=${encodeURIComponent(`http://[::ffff:127.0.0.1]:${portOf(other)}/fixtures/image-png`)}`,
      ),
    );
    assert.equal(mapped.json.error.code, 'source_refused');
    assert.ok(trusted.hits.includes('/redirect'), 'the trusted origin answered the first hop');
    assert.deepEqual(other.hits, []);
  });

  it('refuses other schemes and credentials with a clear code', async () => {
    for (const url of ['ftp://127.0.0.1/x', 'file:///etc/passwd', 'gopher://127.0.0.1:70/x', 'data:text/plain,hi']) {
      const res = await postFile(url);
      assert.equal(res.status, 422, `${url}: ${res.text}`);
      assert.equal(res.json.error.code, 'source_refused', url);
      assert.match(res.json.error.message, /only http: and https:/, url);
    }
    const hits = trusted.hits.length;
    const creds = await postFile(`http://user:pass@${trusted.host}/fixtures/image-png`);
    assert.equal(creds.status, 422);
    assert.equal(creds.json.error.code, 'source_refused');
    assert.equal(trusted.hits.length, hits, 'credentials are refused before connecting, even to a trusted host');
    assert.deepEqual(other.hits, []);
    assert.deepEqual(await tmpFiles(), [], 'refusals leave no scratch files');
  });
});

describe('MEDIAD_ALLOW_PRIVATE_URLS', () => {
  it('lets a server without an allow-list fetch from loopback', async () => {
    const open = await startTestServer({ MEDIAD_ALLOW_PRIVATE_URLS: 'true' });
    try {
      const k = (await open.key('acme', 'lan')).key;
      const hitsBefore = other.hits.length;
      const res = await open.call('POST', '/files', { key: k, body: { url: other.url('/fixtures/image-png') } });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.json.data.kind, 'image');
      assert.equal(other.hits.length, hitsBefore + 1);
    } finally {
      await open.stop();
    }
    // The server with the allow-list still refuses the same URL.
    assert.equal((await postFile(other.url('/fixtures/image-png'))).json.error.code, 'source_refused');
  });
});
