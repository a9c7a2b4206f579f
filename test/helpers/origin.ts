import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fixture, type FixtureName } from './fixtures.js';

export interface Origin {
  base: string;
  host: string;
  /** Requests received, by path; lets tests assert a refused URL was never fetched. */
  hits: string[];
  url(p: string): string;
  close(): Promise<void>;
}

/**
 * A loopback HTTP origin for ingest tests:
 *   /fixtures/<name>          a generated fixture
 *   /redirect?to=<url>        302 to that URL
 *   /status/<code>            an empty answer with that status
 *   /stall                    headers, then nothing
 *   /bytes/<n>                n random bytes (not media)
 *   /once-missing/<name>      404 at the first request of this path, the fixture after (a retry succeeds)
 */
export async function startOrigin(): Promise<Origin> {
  const hits: string[] = [];
  const missedOnce = new Set<string>();
  const server = http.createServer(async (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    hits.push(u.pathname);
    try {
      const onceMissing = u.pathname.startsWith('/once-missing/');
      if (onceMissing && !missedOnce.has(u.pathname)) {
        missedOnce.add(u.pathname);
        res.writeHead(404).end();
      } else if (u.pathname.startsWith('/fixtures/') || onceMissing) {
        const file = await fixture(u.pathname.slice(u.pathname.indexOf('/', 1) + 1) as FixtureName);
        const { size } = await fs.promises.stat(file);
        res.writeHead(200, { 'content-length': size, 'content-type': 'application/octet-stream' });
        fs.createReadStream(file).pipe(res);
      } else if (u.pathname === '/redirect') {
        res.writeHead(302, { location: u.searchParams.get('to') ?? '/' }).end();
      } else if (u.pathname.startsWith('/status/')) {
        res.writeHead(Number(u.pathname.slice(8))).end();
      } else if (u.pathname === '/stall') {
        res.writeHead(200, { 'content-type': 'video/mp4' });
        res.write(Buffer.alloc(10));
      } else if (u.pathname.startsWith('/bytes/')) {
        const n = Number(u.pathname.slice(7));
        const buf = Buffer.alloc(n);
        for (let i = 0; i < n; i++) buf[i] = (i * 7919) & 0xff;
        res.writeHead(200, { 'content-length': n }).end(buf);
      } else {
        res.writeHead(404).end();
      }
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    host: `127.0.0.1:${port}`,
    hits,
    url: (p) => `${base}${p}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
