import fs from 'node:fs/promises';
import net from 'node:net';

/**
 * A free TCP port on 127.0.0.1, chosen below the kernel's ephemeral range: a port from listen(0)
 * is in that range, so between our close and the server's listen the kernel could hand it to an
 * outgoing connection (a database or HTTP client of the same run) and the listen failed with
 * EADDRINUSE. Below the range only another test process picking the same port can take it.
 */
let belowEphemeral: Promise<number> | undefined;
export async function freePort(): Promise<number> {
  const low = await (belowEphemeral ??= fs
    .readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
    .then((text) => Number(text.trim().split(/\s+/)[0]))
    .then((first) => (Number.isInteger(first) && first > 12_000 ? first - 10_000 : 0))
    .catch(() => 0));
  for (let attempt = 0; ; attempt++) {
    const wanted = low && attempt < 50 ? low + Math.floor(Math.random() * 10_000) : 0;
    const port = await new Promise<number | null>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(null));
      srv.listen(wanted, '127.0.0.1', () => {
        const bound = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(bound));
      });
    });
    if (port !== null) return port;
  }
}
