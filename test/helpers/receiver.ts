import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A loopback webhook receiver; `answer` decides each response's status (and headers). */
export async function startReceiver(
  answer: (n: number, r: Received) => { status: number; headers?: Record<string, string> } = () => ({ status: 200 }),
) {
  const received: Received[] = [];
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    const r = { headers: req.headers, body, at: Date.now() };
    received.push(r);
    const a = answer(received.length, r);
    res.writeHead(a.status, a.headers).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    host: `127.0.0.1:${port}`,
    url: (p = '/hook') => `http://127.0.0.1:${port}${p}`,
    received,
    async waitFor(n: number, timeoutMs = 15_000): Promise<Received[]> {
      const deadline = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} webhook requests, got ${received.length}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
