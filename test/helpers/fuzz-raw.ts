import type { Random } from './fuzz-random.js';

// Raw HTTP/1.1 for the fuzzer: requests no client library will send. Each says whether the
// server may close without answering (the client stopped mid-request) and which answers
// belong to HEAD requests (no body whatever Content-Length says).

export interface RawCase {
  name: string;
  data: Buffer;
  /** The request is incomplete (cut short), so closing without an answer is correct too. */
  silentOk: boolean;
  headAnswers: boolean[];
}

const CRLF = '\r\n';
const PATHS = [
  '/health',
  '/files',
  '/media',
  '/tasks?page=1e20',
  '/files/file_AAAAAAAAAAAAAAAA',
  '/project',
  '/nope',
  '/d/prj_x/a/b.png',
  '/tasks/task_x/cancel',
];

function validHead(r: Random, key: string, extra: string[] = []): { method: string; lines: string[]; body: string } {
  const method = r.pick(['GET', 'POST', 'PATCH', 'DELETE', 'PUT']);
  const body =
    method === 'GET' || method === 'DELETE' ? '' : r.pick(['{}', '{"title":"x"}', '{"metadata":{"n":1e999}}', '[', '']);
  const lines = [`${method} ${r.pick(PATHS)} HTTP/1.1`, 'Host: localhost'];
  if (r.chance(0.7)) lines.push(`Authorization: Bearer ${key}`);
  if (body) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  return { method, lines: [...lines, ...extra], body };
}

const text = (lines: string[], body = '') => Buffer.from(lines.join(CRLF) + CRLF + CRLF + body, 'latin1');

/** One random malformed (or odd but valid) request. */
export function makeRawCase(r: Random, key: string): RawCase {
  const kinds: (() => RawCase)[] = [
    () => {
      // A valid request with one byte of its head replaced or inserted: control, DEL, Latin-1, NUL.
      const h = validHead(r, key);
      const data = text(h.lines, h.body);
      const headLen = data.indexOf('\r\n\r\n');
      const at = r.int(headLen);
      const byte = r.pick([0x00, 0x01, 0x08, 0x0b, 0x7f, 0x80, 0xe9, 0xff, 0x20, 0x3a, 0x0d, 0x0a]);
      const out = Buffer.concat([
        data.subarray(0, at),
        Buffer.from([byte]),
        data.subarray(r.chance(0.5) ? at : at + 1),
      ]);
      return { name: 'corrupted head', data: out, silentOk: true, headAnswers: [] };
    },
    () => {
      const bad = r.pick([
        'Bad Header: 1',
        'X-Nul\u0000: x',
        ': novalue',
        'NoColonHere',
        ' folded: x',
        'X-Value: a\u0000b',
        'X-Ctl: \u0001',
        'Content-Length: abc',
        'Content-Length: -1',
        'Content-Length: 99999999999999999999',
        'Content-Length: 1, 2',
        'Transfer-Encoding: gzip',
        'Transfer-Encoding: chunked, gzip',
        'Host: a b',
      ]);
      const h = validHead(r, key);
      h.lines.splice(1 + r.int(h.lines.length - 1), 0, bad);
      return {
        name: `bad header ${JSON.stringify(bad)}`,
        data: text(h.lines, h.body),
        silentOk: /Content-Length: (-1|999)/.test(bad),
        headAnswers: [],
      };
    },
    () => {
      const body = r.pick([
        '0\r\n\r\n',
        'zz\r\n',
        'ffffffffffffffffffff\r\n',
        `3;${'x'.repeat(20_000)}\r\nabc\r\n0\r\n\r\n`,
        '3\r\nabcdef\r\n0\r\n\r\n',
        '-1\r\n',
        '2\r\n{}\r\n0\r\n\r\n',
        '2\r\n{}0\r\n\r\n',
      ]);
      const te = r.pick([
        'Transfer-Encoding: chunked',
        'Transfer-Encoding: chunked\r\nContent-Length: 3',
        'Content-Length: 3\r\nContent-Length: 4',
        'Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked',
      ]);
      return {
        name: `framing ${JSON.stringify(te)} ${JSON.stringify(body.slice(0, 20))}`,
        data: text(
          [
            `POST ${r.pick(['/media', '/files', '/health'])} HTTP/1.1`,
            'Host: localhost',
            `Authorization: Bearer ${key}`,
            'Content-Type: application/json',
            te,
          ],
          body,
        ),
        silentOk: true,
        headAnswers: [],
      };
    },
    () => {
      const garbage = r.pick([
        'HELLO WORLD\r\n\r\n',
        '\r\n\r\n\r\n',
        'GET\r\n\r\n',
        'GET / HTTP/9.9\r\nHost: x\r\n\r\n',
        'GET / FOO/1.1\r\n\r\n',
        'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
        'get /health http/1.1\r\nHost: x\r\n\r\n',
        'GET /health HTTP/1.1\nHost: x\n\n',
        'GET /health HTTP/1.1\rHost: x\r\r',
        ' GET /health HTTP/1.1\r\n\r\n',
        'GET  /health  HTTP/1.1\r\n\r\n',
        'GET /health HTTP/1.1 extra\r\n\r\n',
      ]);
      // Blank lines before a request are allowed and skipped: alone they are no request at all.
      return {
        name: `garbage ${JSON.stringify(garbage.slice(0, 30))}`,
        data: Buffer.from(garbage, 'latin1'),
        silentOk: garbage.trim() === '',
        headAnswers: [],
      };
    },
    () => {
      const bytes = Buffer.from(Array.from({ length: 1 + r.int(300) }, () => r.int(256)));
      if (bytes[0] === 0x16) bytes[0] = 0x17; // 0x16 would start a TLS handshake on the plain port
      return { name: 'random bytes', data: bytes, silentOk: true, headAnswers: [] };
    },
    () => {
      const size = 16_400 + r.int(20_000);
      const where = r.int(3);
      const lines =
        where === 0
          ? [`GET /health?${'q'.repeat(size)} HTTP/1.1`, 'Host: x']
          : where === 1
            ? ['GET /health HTTP/1.1', 'Host: x', `X-Big: ${'a'.repeat(size)}`]
            : ['GET /health HTTP/1.1', 'Host: x', ...Array.from({ length: size / 10 }, (_, i) => `X-${i}: abcde`)];
      return { name: `oversized head (${where})`, data: text(lines), silentOk: false, headAnswers: [] };
    },
    () => {
      const line = r.pick([
        'CONNECT 127.0.0.1:443 HTTP/1.1',
        'CONNECT example.com:443 HTTP/1.1',
        'GET http://127.0.0.1/health HTTP/1.1',
        'OPTIONS * HTTP/1.1',
        'GET 127.0.0.1:443 HTTP/1.1',
        'TRACE /health HTTP/1.1',
        'GET /health HTTP/1.0',
        'GET /health HTTP/1.1',
      ]);
      const host = r.pick(['Host: localhost', '', 'Host: a\r\nHost: b', 'Host: ', `Host: ${'h'.repeat(300)}`]);
      return {
        name: `${line} ${JSON.stringify(host)}`,
        data: text([line, host].filter(Boolean)),
        silentOk: false,
        headAnswers: [],
      };
    },
    () => {
      // A good request, then another: good, HEAD, malformed or cut short.
      const first = validHead(r, key, ['Connection: keep-alive']);
      const second = r.pick([
        'GET /health HTTP/1.1\r\nHost: x\r\n\r\n',
        'HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n',
        'BAD\u0001 / HTTP/1.1\r\n\r\n',
        'GET /health HT',
      ]);
      return {
        name: `pipelined ${JSON.stringify(second.slice(0, 20))}`,
        data: Buffer.concat([text(first.lines, first.body), Buffer.from(second, 'latin1')]),
        silentOk: false,
        headAnswers: [first.method === 'HEAD', second.startsWith('HEAD')],
      };
    },
    () => {
      const extra = r.pick([
        'Expect: 100-continue',
        'Expect: bogus',
        'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13',
        'Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA',
        'Connection: close',
        'Connection: bogus',
      ]);
      const h = validHead(r, key, [extra]);
      return {
        name: `header ${JSON.stringify(extra.slice(0, 40))}`,
        data: text(h.lines, h.body),
        silentOk: false,
        headAnswers: [],
      };
    },
    () => {
      const cut = r.pick([
        'GET /health HTTP/1.1\r\nHost: x\r\n',
        'POST /media HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"title":',
        'GET /heal',
        '',
      ]);
      return {
        name: `cut short ${JSON.stringify(cut.slice(0, 30))}`,
        data: Buffer.from(cut, 'latin1'),
        silentOk: true,
        headAnswers: [],
      };
    },
  ];
  return r.pick(kinds)();
}
