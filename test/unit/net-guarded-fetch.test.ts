// Guarded client against loopback servers only. Non-loopback URLs appear solely as
// redirect targets or lookup answers the guard must refuse before any connection.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isAppError } from '../../src/errors.js';
import { createGuardedClient, type LookupFn, type UrlPolicy } from '../../src/net/index.js';
import { createPinnedConnector, pinnedLookup } from '../../src/net/pinned-connector.js';

interface TestServer {
  port: number;
  hits: string[];
  headers: http.IncomingHttpHeaders[];
  server: http.Server;
}

async function startServer(
  handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void,
): Promise<TestServer> {
  const hits: string[] = [];
  const headers: http.IncomingHttpHeaders[] = [];
  const server = http.createServer(async (req, res) => {
    hits.push(req.url ?? '');
    headers.push(req.headers);
    let body = '';
    for await (const chunk of req) body += chunk;
    handler(req, res, body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, hits, headers, server };
}

const PAYLOAD = Buffer.from('hello from the loopback origin\n'.repeat(100));
let main: TestServer;
let other: TestServer; // a second loopback origin that is NOT in allowHosts
let dir: string;
let base: string;

function route(req: http.IncomingMessage, res: http.ServerResponse, body: string): void {
  const url = new URL(req.url ?? '/', 'http://x');
  const redirect = (status: number, location: string) => res.writeHead(status, { location }).end('moved');
  const chain = /^\/chain\/(\d+)$/.exec(url.pathname);
  if (chain) {
    const n = Number(chain[1]);
    return n === 0 ? void res.end('end of chain') : void redirect(302, `/chain/${n - 1}`);
  }
  switch (url.pathname) {
    case '/x':
      return void res.writeHead(200, { 'content-type': 'text/plain', 'content-length': PAYLOAD.length }).end(PAYLOAD);
    case '/echo':
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          method: req.method,
          body,
          auth: req.headers.authorization ?? null,
          ua: req.headers['user-agent'],
          host: req.headers.host,
        }),
      );
    // Refused redirect targets stay on loopback, so even a broken guard could not send a packet elsewhere;
    // the metadata and private ranges are covered by the guard's decision alone (url-check, address-policy tests).
    case '/to-mapped':
      return void redirect(302, `http://[::ffff:127.0.0.1]:${other.port}/latest/meta-data/`);
    case '/to-unspecified':
      return void redirect(301, `http://0.0.0.0:${other.port}/`);
    case '/to-other-port':
      return void redirect(302, `http://127.0.0.1:${other.port}/x`);
    case '/to-ftp':
      return void redirect(302, 'ftp://127.0.0.1/x');
    case '/307':
      return void redirect(307, '/echo');
    case '/303':
      return void redirect(303, '/echo');
    case '/302':
      return void redirect(302, '/echo');
    case '/to-localhost-echo':
      return void redirect(307, `http://localhost:${main.port}/echo`);
    case '/404':
      return void res.writeHead(404).end('nope');
    case '/huge-declared':
      return void res.writeHead(200, { 'content-length': 1_000_000 }).end(Buffer.alloc(1_000_000));
    case '/chunked': {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }); // no length: chunked
      let sent = 0;
      const tick = () => {
        if (sent >= 200 * 1024 || res.destroyed) return void res.end();
        sent += 16 * 1024;
        res.write(Buffer.alloc(16 * 1024, 1), () => setImmediate(tick));
      };
      return tick();
    }
    case '/stall-body':
      return void res.writeHead(200, { 'content-length': 1000 }).write('only a little');
    case '/stall-headers':
      return; // never answers
    case '/dribble': {
      res.writeHead(200);
      const timer = setInterval(() => res.write('.'), 30);
      res.on('close', () => clearInterval(timer));
      return;
    }
    default:
      res.writeHead(500).end();
  }
}

function policy(over: Partial<UrlPolicy> = {}): UrlPolicy {
  return {
    allowPrivate: false,
    allowHosts: [`127.0.0.1:${main.port}`],
    maxRedirects: 5,
    connectTimeoutMs: 2000,
    idleTimeoutMs: 2000,
    totalTimeoutMs: 10_000,
    maxBytes: 10 * 1024 * 1024,
    userAgent: 'mediad-test/1',
    ...over,
  };
}

/** Loopback-only resolver: never falls through to system DNS. */
function loopbackLookup(
  calls: string[] = [],
  answers: Record<string, string[]> = { localhost: ['127.0.0.1'] },
): LookupFn {
  return async (hostname) => {
    calls.push(hostname);
    const addrs = answers[hostname];
    if (!addrs) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addrs.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

function client(over: Partial<UrlPolicy> = {}, lookup: LookupFn = loopbackLookup()) {
  return createGuardedClient(policy(over), { lookup });
}

function expectCode(code: string, pattern?: RegExp) {
  return (err: unknown) => {
    assert.ok(isAppError(err), `expected AppError(${code}), got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (pattern) assert.match(err.message, pattern);
    return true;
  };
}

before(async () => {
  main = await startServer(route);
  other = await startServer(route);
  dir = await mkdtemp(path.join(tmpdir(), 'mediad-net-'));
  base = `http://127.0.0.1:${main.port}`;
});

after(async () => {
  for (const s of [main, other]) {
    s.server.closeAllConnections();
    s.server.close();
  }
  await rm(dir, { recursive: true, force: true });
});

describe('guarded client: address guard', () => {
  it('(a) refuses loopback when not allowed, before any request reaches the server', async () => {
    const c = client({ allowHosts: [] });
    const before = main.hits.length;
    const dest = path.join(dir, 'a');
    await assert.rejects(
      c.download(`${base}/x`, dest),
      expectCode('source_refused', /127\.0\.0\.1 is a loopback address/),
    );
    await assert.rejects(
      c.download(`http://localhost:${main.port}/x`, dest),
      expectCode('source_refused', /localhost resolves to 127\.0\.0\.1/),
    );
    await assert.rejects(c.request(`http://[::ffff:127.0.0.1]:${main.port}/x`), expectCode('source_refused'));
    assert.equal(main.hits.length, before);
    assert.equal(existsSync(dest), false);
    await c.close();
  });

  it('(b) downloads from an origin trusted via allowHosts', async () => {
    const c = client();
    const dest = path.join(dir, 'b');
    const progress: number[] = [];
    const result = await c.download(`${base}/x`, dest, { onProgress: (n) => progress.push(n) });
    assert.deepEqual(result, { size: PAYLOAD.length, contentType: 'text/plain', finalUrl: `${base}/x` });
    assert.deepEqual(await readFile(dest), PAYLOAD);
    assert.equal(progress.at(-1), PAYLOAD.length);
    await c.close();
  });

  it('(c) refuses redirects from a trusted origin into non-public addresses (IPv4-mapped, unspecified, untrusted loopback)', async () => {
    const c = client();
    await assert.rejects(
      c.download(`${base}/to-mapped`, path.join(dir, 'c1')),
      expectCode('source_refused', /loopback/),
    );
    await assert.rejects(
      c.download(`${base}/to-unspecified`, path.join(dir, 'c2')),
      expectCode('source_refused', /unspecified|0\.0\.0\.0/),
    );
    await assert.rejects(
      c.download(`${base}/to-other-port`, path.join(dir, 'c3')),
      expectCode('source_refused', /loopback/),
    );
    await assert.rejects(c.request(`${base}/to-ftp`), expectCode('source_refused', /redirected to a URL we refuse/));
    assert.equal(other.hits.length, 0);
    await c.close();
  });

  it('(h) allowPrivate=true allows loopback', async () => {
    const c = client({ allowPrivate: true, allowHosts: [] });
    const res = await c.download(`http://127.0.0.1:${other.port}/x`, path.join(dir, 'h'));
    assert.equal(res.size, PAYLOAD.length);
    await c.close();
  });

  it('pins the connection to the vetted answer of the injected lookup (Host header keeps the name)', async () => {
    const calls: string[] = [];
    const c = client({ allowHosts: [`localhost:${main.port}`] }, loopbackLookup(calls));
    const res = await c.request(`http://localhost:${main.port}/echo`);
    assert.equal(res.status, 200);
    assert.equal((JSON.parse(await res.body.text()) as { host: string }).host, `localhost:${main.port}`);
    assert.deepEqual(calls, ['localhost', 'localhost']); // pre-dispatch check, then the connector's own check
    await c.close();
  });

  it('the connector re-checks at connect time and refuses a private or mixed answer', async () => {
    const connect = createPinnedConnector(
      policy({ allowHosts: [] }),
      loopbackLookup([], { 'rebind.test': ['127.0.0.2'], 'mixed.test': ['127.0.0.1', '127.0.0.3'] }),
    );
    for (const hostname of ['rebind.test', 'mixed.test']) {
      const err = await new Promise<Error | null>((resolve) =>
        connect({ protocol: 'http:', hostname, host: `${hostname}:${main.port}`, port: String(main.port) }, (...args) =>
          resolve(args[0]),
        ),
      );
      assert.ok(isAppError(err) && err.code === 'source_refused', String(err));
    }
  });

  it('the connector connects to exactly the vetted address', async () => {
    const connect = createPinnedConnector(policy({ allowHosts: [`localhost:${main.port}`] }), loopbackLookup());
    const socket = await new Promise<Socket>((resolve, reject) =>
      connect(
        { protocol: 'http:', hostname: 'localhost', host: `localhost:${main.port}`, port: String(main.port) },
        (e, s) => (e ? reject(e) : resolve(s as Socket)),
      ),
    );
    assert.equal(socket.remoteAddress, '127.0.0.1');
    socket.destroy();
  });

  it('pinnedLookup answers only for the vetted name and family', async () => {
    const lookup = pinnedLookup('localhost', [{ address: '127.0.0.1', family: 4 }]);
    const ask = (name: string, opts: object) =>
      new Promise<unknown>((resolve) => lookup(name, opts, (err, address) => resolve(err ?? address)));
    assert.deepEqual(await ask('localhost', { all: true }), [{ address: '127.0.0.1', family: 4 }]);
    assert.equal(await ask('localhost', {}), '127.0.0.1');
    assert.ok((await ask('localhost', { family: 6 })) instanceof Error);
    assert.ok((await ask('elsewhere', {})) instanceof Error);
  });
});

describe('guarded client: redirects', () => {
  it('(d) follows up to maxRedirects and refuses longer chains', async () => {
    const c = client({ maxRedirects: 3 });
    const ok = await c.request(`${base}/chain/3`);
    assert.equal(ok.status, 200);
    assert.equal(ok.url, `${base}/chain/0`);
    await ok.body.dump();
    await assert.rejects(c.request(`${base}/chain/4`), expectCode('source_unreachable', /too many redirects/));
    const none = client({ maxRedirects: 0 });
    await assert.rejects(none.request(`${base}/307`), expectCode('source_unreachable', /too many redirects/));
    await Promise.all([c.close(), none.close()]);
  });

  it('(i) follows a 307 within the allowed origin, keeping method and body', async () => {
    const c = client();
    const res = await c.request(`${base}/307`, {
      method: 'POST',
      body: 'payload',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(res.url, `${base}/echo`);
    assert.deepEqual(JSON.parse(await res.body.text()), {
      method: 'POST',
      body: 'payload',
      auth: null,
      ua: 'mediad-test/1',
      host: `127.0.0.1:${main.port}`,
    });
    await c.close();
  });

  it('turns 303, and 302 after POST, into a bodyless GET', async () => {
    const c = client();
    for (const p of ['/303', '/302']) {
      const res = await c.request(`${base}${p}`, { method: 'POST', body: 'payload' });
      const echo = JSON.parse(await res.body.text()) as { method: string; body: string };
      assert.deepEqual([echo.method, echo.body], ['GET', ''], p);
    }
    await c.close();
  });

  it('drops credentials when a redirect changes origin', async () => {
    const c = client({ allowHosts: [`127.0.0.1:${main.port}`, `localhost:${main.port}`] });
    const res = await c.request(`${base}/to-localhost-echo`, { headers: { Authorization: 'Bearer secret' } });
    assert.equal((JSON.parse(await res.body.text()) as { auth: string | null }).auth, null);
    await c.close();
  });
});

describe('guarded client: limits and failures', () => {
  it('(e) refuses a declared Content-Length over maxBytes before reading', async () => {
    const c = client({ maxBytes: 1000 });
    const dest = path.join(dir, 'e1');
    await assert.rejects(c.download(`${base}/huge-declared`, dest), expectCode('source_too_large', /1000000 bytes/));
    assert.equal(existsSync(dest), false);
    await c.close();
  });

  it('(e) aborts a chunked body that grows past maxBytes and removes the partial file', async () => {
    const c = client({ maxBytes: 50 * 1024 });
    const dest = path.join(dir, 'e2');
    await assert.rejects(c.download(`${base}/chunked`, dest), expectCode('source_too_large'));
    assert.equal(existsSync(dest), false);
    const roomy = client({ maxBytes: 300 * 1024 });
    const ok = await roomy.download(`${base}/chunked`, path.join(dir, 'e3'));
    assert.equal(ok.size, 208 * 1024);
    await Promise.all([c.close(), roomy.close()]);
  });

  it('(f) times out when the body stalls, and removes the partial file', async () => {
    const c = client({ idleTimeoutMs: 200 });
    const dest = path.join(dir, 'f');
    await assert.rejects(c.download(`${base}/stall-body`, dest), expectCode('source_timeout', /stopped sending data/));
    assert.equal(existsSync(dest), false);
    await assert.rejects(c.request(`${base}/stall-headers`), expectCode('source_timeout', /no response within 200 ms/));
    await c.close();
  });

  it('enforces the total deadline even while bytes keep trickling in', async () => {
    const c = client({ idleTimeoutMs: 1000, totalTimeoutMs: 300 });
    await assert.rejects(
      c.download(`${base}/dribble`, path.join(dir, 'dl')),
      expectCode('source_timeout', /longer than 300 ms/),
    );
    await c.close();
  });

  it("passes the caller's own abort through untouched", async () => {
    const c = client();
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('caller gave up')), 50);
    await assert.rejects(c.download(`${base}/dribble`, path.join(dir, 'ab'), { signal: ac.signal }), /caller gave up/);
    await c.close();
  });

  it('(g) reports a 404 as source_rejected (permanent)', async () => {
    const c = client();
    await assert.rejects(
      c.download(`${base}/404`, path.join(dir, 'g')),
      expectCode('source_rejected', /answered 404 Not Found/),
    );
    const res = await c.request(`${base}/404`); // request() hands non-2xx to the caller
    assert.equal(res.status, 404);
    await res.body.dump();
    await c.close();
  });

  it('lets local errors (disk, onProgress) surface as they are', async () => {
    const c = client();
    await assert.rejects(c.download(`${base}/x`, path.join(dir, 'missing-dir', 'f')), (err: NodeJS.ErrnoException) => {
      assert.ok(!isAppError(err));
      assert.equal(err.code, 'ENOENT');
      return true;
    });
    const dest = path.join(dir, 'progress-throws');
    const boom = () => {
      throw new Error('progress callback failed');
    };
    await assert.rejects(c.download(`${base}/chunked`, dest, { onProgress: boom }), /progress callback failed/);
    assert.equal(existsSync(dest), false);
    await c.close();
  });

  it('reports a refused connection as source_unreachable', async () => {
    const closed = await startServer(route);
    const port = closed.port;
    closed.server.close();
    await once(closed.server, 'close');
    const c = client({ allowHosts: [`127.0.0.1:${port}`] });
    await assert.rejects(
      c.request(`http://127.0.0.1:${port}/x`),
      expectCode('source_unreachable', /connection refused/),
    );
    await c.close();
  });
});
