import net from 'node:net';
import tls from 'node:tls';

// Raw HTTP/1.1 over a loopback socket (TLS or plain TCP), for requests no HTTP client will
// send: malformed heads, bad framing, CONNECT. The answers are split into responses by hand.

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The response as latin1 text, for assertion messages. */
  raw: string;
}

export interface RawExchange {
  responses: RawResponse[];
  /** Bytes after the last whole response (a partial or unparsable answer). */
  rest: Buffer;
  /** The server closed the connection (rather than the client timing out). */
  closed: boolean;
  error: string | null;
}

export interface RawOptions {
  port: number;
  /** TLS with this CA (servername localhost), or null for plain TCP. */
  tls: { ca: string } | null;
  data: Buffer;
  /**
   * 'now': half-close right after writing, so a server waiting for the rest of a request sees
   * the end (Node then also drops requests still being answered: only for cut-short requests).
   * 'when-answered' (the default): half-close once answers have stopped coming for a moment,
   * as a client that reads its answers would.
   */
  halfClose?: 'now' | 'when-answered';
  /** Longest wait for the whole exchange. */
  timeoutMs?: number;
  /** Requests sent with HEAD, in order: their answers carry no body whatever Content-Length says. */
  headAnswers?: boolean[];
}

/** Quiet time after the last bytes of an answer before the client half-closes. */
const IDLE_AFTER_ANSWER_MS = 100;

/** Writes `data`, then reads until the server closes the connection or the timeout passes. */
export function rawExchange(opts: RawOptions): Promise<RawExchange> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let error: string | null = null;
    let closed = false;
    const socket = opts.tls
      ? tls.connect({ host: '127.0.0.1', port: opts.port, ca: opts.tls.ca, servername: 'localhost' })
      : net.connect({ host: '127.0.0.1', port: opts.port });
    const timer = setTimeout(() => socket.destroy(), opts.timeoutMs ?? 5_000);
    let idle: NodeJS.Timeout | undefined;
    socket.once(opts.tls ? 'secureConnect' : 'connect', () => {
      socket.write(opts.data, () => {
        if (opts.halfClose === 'now') socket.end();
      });
    });
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (opts.halfClose === 'now') return;
      clearTimeout(idle);
      idle = setTimeout(() => socket.end(), IDLE_AFTER_ANSWER_MS);
    });
    socket.on('error', (e) => (error ??= e.message));
    socket.on('end', () => (closed = true));
    socket.on('close', () => {
      clearTimeout(timer);
      clearTimeout(idle);
      const { responses, rest } = splitResponses(Buffer.concat(chunks), opts.headAnswers ?? []);
      resolve({ responses, rest, closed, error });
    });
  });
}

/** Splits a byte stream into HTTP/1.1 responses (Content-Length, chunked, or to the end); 1xx answers are skipped. */
export function splitResponses(all: Buffer, headAnswers: boolean[] = []): { responses: RawResponse[]; rest: Buffer } {
  const responses: RawResponse[] = [];
  let at = 0;
  while (at < all.length) {
    const headEnd = all.indexOf('\r\n\r\n', at, 'latin1');
    if (headEnd < 0) break;
    const lines = all.subarray(at, headEnd).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0] ?? '');
    if (!m) break;
    const status = Number(m[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    let next = headEnd + 4;
    if (status >= 100 && status < 200) {
      at = next;
      continue;
    }
    let body: Buffer = Buffer.alloc(0);
    const isHead = headAnswers[responses.length] === true;
    if (isHead || status === 204 || status === 304) {
      // no body
    } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = all.indexOf('\r\n', next, 'latin1');
        if (lineEnd < 0) return { responses, rest: all.subarray(at) };
        const size = parseInt(all.subarray(next, lineEnd).toString('latin1'), 16);
        if (!Number.isFinite(size)) return { responses, rest: all.subarray(at) };
        next = lineEnd + 2;
        if (size === 0) {
          const trailerEnd = all.indexOf('\r\n', next, 'latin1');
          next = trailerEnd < 0 ? all.length : trailerEnd + 2;
          break;
        }
        parts.push(all.subarray(next, next + size));
        next += size + 2;
      }
      body = Buffer.concat(parts);
    } else if (headers['content-length'] !== undefined) {
      const len = Number(headers['content-length']);
      if (next + len > all.length) return { responses, rest: all.subarray(at) };
      body = all.subarray(next, next + len);
      next += len;
    } else {
      body = all.subarray(next);
      next = all.length;
    }
    responses.push({ status, headers, body, raw: all.subarray(at, next).toString('latin1') });
    at = next;
  }
  return { responses, rest: all.subarray(at) };
}
