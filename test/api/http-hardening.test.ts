import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { fixture } from '../helpers/fixtures.js';
import { rawExchange, type RawResponse } from '../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// The HTTP-layer points of the hardening issue: page ranges, JSON nesting depth, non-finite
// numbers, invalid UTF-8, Accept-Version outside the versioned API, empty Content-Type on
// uploads, and malformed HTTP answered with the envelope over TLS and over plain TCP.

let t: TestServer;
let key: string;
let projectId: string;
let webhookId: string;

before(async () => {
  t = await startTestServer({ MEDIAD_SERVE_WORKERS: 'false', MEDIAD_ALLOWED_URL_HOSTS: '127.0.0.1:9' });
  ({ key, project_id: projectId } = await t.key('hard', 'http'));
  // A loopback URL on a port nothing listens on: deliveries (if any) never leave the machine.
  const hook = await t.call('POST', '/webhooks', {
    key,
    body: { url: 'https://127.0.0.1:9/hook', events: ['task.completed'] },
  });
  assert.equal(hook.status, 201, hook.text);
  webhookId = hook.json.data.id;
});
after(() => t.stop());

const json = (body: string | Buffer, headers: Record<string, string> = {}) => ({
  key,
  raw: body,
  headers: { 'content-type': 'application/json', ...headers },
});
const nested = (levels: number, inner = '1') => '['.repeat(levels) + inner + ']'.repeat(levels);

function assertEnvelopeError(res: { status: number; json: any; text: string }, status: number, code: string): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.json?.error?.code, code, res.text);
  assert.equal(res.json.error.status, status);
  assert.equal(res.json.data, null);
  assert.equal(res.json.meta.type, 'error');
}

describe('page and limit', () => {
  const lists = () => [
    '/files',
    '/media',
    '/tasks',
    '/automations',
    '/events',
    '/webhooks',
    `/webhooks/${webhookId}/deliveries`,
  ];

  it('refuses page values that are not whole numbers in range, on all seven lists, naming query.page', async () => {
    for (const list of lists()) {
      for (const page of [
        '1e20',
        'Infinity',
        '-Infinity',
        '1e400',
        'NaN',
        '0',
        '-1',
        '1.5',
        '0x10',
        '1e1',
        '+3',
        ' 2',
        '9007199254740993',
        '1000000001',
      ]) {
        const res = await t.call('GET', `${list}?page=${encodeURIComponent(page)}`, { key });
        assertEnvelopeError(res, 400, 'validation_failed');
        assert.deepEqual(
          res.json.error.details.map((d: { field: string }) => d.field),
          ['query.page'],
          `${list}?page=${page}`,
        );
      }
    }
  });

  it('refuses limit values outside 1..100 or not whole numbers, naming query.limit', async () => {
    for (const list of lists()) {
      for (const limit of ['1e400', 'Infinity', '0', '101', '1e1', '2.0', '']) {
        const res = await t.call('GET', `${list}?limit=${encodeURIComponent(limit)}`, { key });
        assertEnvelopeError(res, 400, 'validation_failed');
        assert.deepEqual(
          res.json.error.details.map((d: { field: string }) => d.field),
          ['query.limit'],
          `${list}?limit=${limit}`,
        );
      }
    }
  });

  it('answers a page past the last, up to the largest page, with 200 and an empty list', async () => {
    for (const list of lists()) {
      const res = await t.call('GET', `${list}?page=1000000000&limit=100`, { key });
      assert.equal(res.status, 200, `${list}: ${res.text}`);
      assert.deepEqual(res.json.data, []);
      assert.equal(res.json.meta.page, 1000000000);
      assert.equal(res.json.links.next, null);
    }
  });
});

describe('JSON bodies', () => {
  it('accepts 64 levels of nesting and refuses 65 with invalid_json', async () => {
    // {"metadata":{"a": …}} is two levels before the arrays start.
    const ok = await t.call('POST', '/media', json(`{"metadata":{"a":${nested(62)}}}`));
    assert.equal(ok.status, 201, ok.text);
    const deep = await t.call('POST', '/media', json(`{"metadata":{"a":${nested(63)}}}`));
    assertEnvelopeError(deep, 400, 'invalid_json');
    assert.match(deep.json.error.message, /64 levels/);
  });

  it('refuses the bodies that overflowed the stack (metadata, task options, the Idempotency-Key fingerprint) with 400, not 500', async () => {
    const body = `{"metadata":{"a":${nested(4041)}}}`;
    assertEnvelopeError(await t.call('POST', '/media', json(body)), 400, 'invalid_json');
    assertEnvelopeError(
      await t.call('PATCH', '/project', json(`{"require_signed_delivery":${nested(5000)}}`)),
      400,
      'invalid_json',
    );
    assertEnvelopeError(
      await t.call('POST', '/tasks', json(`{"kind":"http","url":"http://127.0.0.1:9/","body":${nested(5000, '{}')}}`)),
      400,
      'invalid_json',
    );
    const idem = { 'idempotency-key': 'hardening-0000000001' };
    assertEnvelopeError(
      await t.call('POST', '/tasks/task_nope/cancel', json(`{"a":${nested(3076)}}`, idem)),
      400,
      'invalid_json',
    );
    // Objects nest as deep as arrays do.
    assertEnvelopeError(
      await t.call('POST', '/media', json(`{"metadata":${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}}`)),
      400,
      'invalid_json',
    );
  });

  it('counts brackets inside strings as text, not nesting', async () => {
    const res = await t.call('POST', '/media', {
      key,
      body: { title: '['.repeat(200), metadata: { note: '{"a":'.repeat(100) + '\\"[' } },
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json.data.title, '['.repeat(200));
  });

  it('refuses non-finite numbers (1e999) with validation_failed naming the field', async () => {
    const res = await t.call('POST', '/media', json('{"metadata":{"size":1e999,"list":[1,-1E400]}}'));
    assertEnvelopeError(res, 400, 'validation_failed');
    assert.deepEqual(
      res.json.error.details.map((d: { field: string }) => d.field),
      ['metadata.size', 'metadata.list[1]'],
    );
    const big = await t.call('POST', '/media', json('{"metadata":{"size":1.7e308,"tiny":1e-400}}'));
    assert.equal(big.status, 201, big.text);
    assert.equal(big.json.data.metadata.size, 1.7e308);
  });

  it('refuses a body that is not UTF-8 with invalid_json instead of replacing the bytes', async () => {
    const latin1 = Buffer.concat([Buffer.from('{"title":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
    assertEnvelopeError(await t.call('POST', '/media', json(latin1)), 400, 'invalid_json');
    const overlong = Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]);
    assertEnvelopeError(await t.call('POST', '/media', json(overlong)), 400, 'invalid_json');
    const surrogate = Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]);
    assertEnvelopeError(await t.call('POST', '/media', json(surrogate)), 400, 'invalid_json');
    const ok = await t.call('POST', '/media', json(Buffer.from('{"title":"café ☕ 🎞"}', 'utf8')));
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.json.data.title, 'café ☕ 🎞');
  });

  it('refuses U+0000 in strings and names (PostgreSQL cannot store it), naming the field', async () => {
    const res = await t.call('POST', '/media', {
      key,
      body: { title: 'a\u0000b', metadata: { ok: 'fine', ['k\u0000']: 1 } },
    });
    assertEnvelopeError(res, 400, 'validation_failed');
    assert.deepEqual(
      res.json.error.details.map((d: { field: string }) => d.field),
      ['title', 'metadata.k\\u0000'],
    );
    const auto = await t.call('POST', '/automations', {
      key,
      body: {
        name: 'x\u0000',
        trigger: { kind: 'event', event: 'media.created' },
        workflow: [{ kind: 'image', width: 10 }],
      },
    });
    assertEnvelopeError(auto, 400, 'validation_failed');
    const text = await t.call('POST', '/media', { key, body: { title: 'a\\u0000b' } });
    assert.equal(text.status, 201, 'a backslash followed by u0000 is text, not U+0000');
  });

  it('refuses path ids that newId() cannot have made, before they reach the database', async () => {
    for (const id of ['file_%00x', '%E2%82%AC', 'a%20b', 'x.y']) {
      const res = await t.call('GET', `/files/${id}`, { key });
      assertEnvelopeError(res, 400, 'validation_failed');
      assert.deepEqual(
        res.json.error.details.map((d: { field: string }) => d.field),
        ['params.id'],
      );
    }
    assertEnvelopeError(
      await t.call('GET', `/webhooks/${webhookId}/deliveries/whd_%00`, { key }),
      400,
      'validation_failed',
    );
    assertEnvelopeError(await t.call('GET', '/files/file_AAAAAAAAAAAAAAAA', { key }), 404, 'not_found');
  });

  it('still refuses __proto__ keys and still treats an absent body as no properties', async () => {
    assertEnvelopeError(
      await t.call('POST', '/media', json('{"metadata":{"__proto__":{"x":1}}}')),
      400,
      'invalid_json',
    );
    assert.equal((await t.call('POST', '/media', { key })).status, 201);
    assertEnvelopeError(await t.call('POST', '/media', json('')), 400, 'invalid_json');
  });
});

describe('Accept-Version outside the versioned API', () => {
  it('ignores the header on /health and on file delivery, and still refuses it on the API', async () => {
    const health = await t.call('GET', '/health', { headers: { 'accept-version': 'bogus' } });
    assert.equal(health.status, 200, health.text);
    assert.equal(health.json.meta.version, '2025-07-01');
    const missing = await t.call('GET', `/d/${projectId}/x/none.png`, { headers: { 'accept-version': 'bogus' } });
    assertEnvelopeError(missing, 404, 'not_found');
    const notAllowed = await t.call('POST', '/health', { headers: { 'accept-version': 'bogus' } });
    assertEnvelopeError(notAllowed, 405, 'method_not_allowed');
    assertEnvelopeError(
      await t.call('GET', '/files', { key, headers: { 'accept-version': 'bogus' } }),
      400,
      'unsupported_version',
    );
  });
});

describe('PUT uploads and Content-Type', () => {
  it('treats an empty or blank Content-Type like a missing one', async () => {
    const png = await fs.readFile(await fixture('image-png'));
    for (const [name, headers] of [
      ['missing', {}],
      ['empty', { 'content-type': '' }],
      ['blank', { 'content-type': '  ' }],
    ] as const) {
      const res = await t.call('PUT', `/d/${projectId}/uploads/${name}.png`, { key, raw: png, headers });
      assert.equal(res.status, 201, `${name}: ${res.text}`);
      assert.equal(res.json.data.type, 'image/png');
    }
  });
});

describe('malformed HTTP gets the envelope', () => {
  const port = () => Number(new URL(t.base).port);
  // plainCode: over plain TCP a well-formed head is answered https_required before the body is read.
  // parsed: the head parses, so the app answers it and the connection may stay open.
  const cases: {
    name: string;
    request: string;
    status: number;
    code: string;
    plainStatus?: number;
    plainCode?: string;
    parsed?: true;
  }[] = [
    {
      name: 'control byte in the target',
      request: 'GET /fi\x01les HTTP/1.1\r\nHost: x\r\n\r\n',
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'non-ASCII byte in the target',
      request: 'GET /fi\xe9les HTTP/1.1\r\nHost: x\r\n\r\n',
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'space in a header name',
      request: 'GET /health HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n',
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'Content-Length with Transfer-Encoding',
      request: 'POST /media HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      status: 400,
      code: 'bad_request',
    },
    {
      name: 'bad chunk size',
      request:
        'POST /media HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      status: 400,
      code: 'bad_request',
      plainCode: 'https_required',
    },
    { name: 'garbage request line', request: 'HELLO WORLD\r\n\r\n', status: 400, code: 'bad_request' },
    {
      name: 'head over 16 KiB',
      request: `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      status: 431,
      code: 'headers_too_large',
    },
    // Over TLS this spans three records, and Node reports the overflow once per record.
    {
      name: 'head over 32 KiB in many headers',
      request: `GET /health HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 3000 }, (_, i) => `X-${i}: abcde\r\n`).join('')}\r\n`,
      status: 431,
      code: 'headers_too_large',
    },
    {
      name: 'HTTP/1.1 without Host',
      request: 'GET /health HTTP/1.1\r\n\r\n',
      status: 400,
      code: 'bad_request',
      plainCode: 'https_required',
      parsed: true,
    },
    {
      name: 'Transfer-Encoding other than chunked alone',
      request:
        'POST /media HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
      status: 400,
      code: 'bad_request',
      plainCode: 'https_required',
      parsed: true,
    },
    {
      name: 'two Host headers',
      request: 'GET /health HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n',
      status: 400,
      code: 'bad_request',
      plainCode: 'https_required',
      parsed: true,
    },
    {
      name: 'an HTTP/2.0 request line',
      request: 'GET /health HTTP/2.0\r\nHost: localhost\r\n\r\n',
      status: 505,
      code: 'http_version_not_supported',
      plainStatus: 400,
      plainCode: 'https_required',
      parsed: true,
    },
    {
      name: 'CONNECT',
      request: 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
      status: 400,
      code: 'bad_request',
    },
  ];

  const check = (name: string, responses: RawResponse[], status: number, code: string, closes = true) => {
    assert.equal(responses.length, 1, `${name}: one answer expected`);
    const [res] = responses;
    assert.equal(res!.status, status, `${name}: ${res!.raw.slice(0, 300)}`);
    assert.match(res!.headers['content-type'] ?? '', /^application\/json/, name);
    const body = JSON.parse(res!.body.toString('utf8'));
    assert.equal(body.error.code, code, name);
    assert.equal(body.error.status, status, name);
    assert.equal(body.data, null, name);
    assert.equal(body.meta.type, 'error', name);
    if (closes) assert.equal(res!.headers.connection, 'close', name);
  };

  for (const secure of [true, false]) {
    it(`over ${secure ? 'TLS' : 'plain TCP'}`, async () => {
      const ca = await fs.readFile(t.server.caCertPath!, 'utf8');
      for (const c of cases) {
        const { responses } = await rawExchange({
          port: port(),
          tls: secure ? { ca } : null,
          data: Buffer.from(c.request, 'latin1'),
        });
        check(
          c.name,
          responses,
          secure ? c.status : (c.plainStatus ?? c.status),
          secure ? c.code : (c.plainCode ?? c.code),
          !(secure && c.parsed),
        );
      }
    });
  }

  it('answers an Expect header other than 100-continue with 417, in the request’s generation', async () => {
    const ca = await fs.readFile(t.server.caCertPath!, 'utf8');
    for (const version of ['', 'Accept-Version: 2025-08-20\r\n']) {
      const { responses } = await rawExchange({
        port: port(),
        tls: { ca },
        data: Buffer.from(
          `POST /media HTTP/1.1\r\nHost: localhost\r\nExpect: 200-ok\r\n${version}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
        ),
      });
      assert.equal(responses.length, 1);
      assert.equal(responses[0]!.status, 417, responses[0]!.raw);
      const body = JSON.parse(responses[0]!.body.toString());
      const error = version ? body : body.error;
      assert.equal(error.code, 'expectation_failed');
      assert.equal(error.status, 417);
      assert.equal(responses[0]!.headers['mediad-version'], version ? '2025-08-20' : '2025-07-01');
    }
  });

  it('refuses ambiguous framing in the bare generation’s shape when asked for', async () => {
    const ca = await fs.readFile(t.server.caCertPath!, 'utf8');
    const { responses } = await rawExchange({
      port: port(),
      tls: { ca },
      data: Buffer.from('GET /health HTTP/1.1\r\nHost: localhost\r\nHost: b\r\nAccept-Version: 2025-08-20\r\n\r\n'),
    });
    assert.equal(responses[0]!.status, 400, responses[0]!.raw);
    assert.deepEqual(JSON.parse(responses[0]!.body.toString()).code, 'bad_request');
    assert.equal(responses[0]!.headers['mediad-version'], '2025-08-20');
  });

  it('takes an HTTP/1.0 request without Host as addressed to the public host', async () => {
    const ca = await fs.readFile(t.server.caCertPath!, 'utf8');
    const { responses } = await rawExchange({
      port: port(),
      tls: { ca },
      data: Buffer.from('GET /nowhere HTTP/1.0\r\n\r\n'),
    });
    assert.equal(responses[0]?.status, 404, responses[0]?.raw);
    assert.equal(JSON.parse(responses[0]!.body.toString()).links.self, `${t.base}/nowhere`);
  });

  it('plain HTTP that parses is still told to use HTTPS', async () => {
    const { responses } = await rawExchange({
      port: port(),
      tls: null,
      data: Buffer.from('GET /files HTTP/1.1\r\nHost: x\r\n\r\n'),
    });
    check('plain GET', responses, 400, 'https_required');
  });
});

describe('a request body that trickles in', () => {
  it('gets 408 once a window of MEDIAD_BODY_TIMEOUT_SECONDS brings less than 1 KiB, and the connection closes', async () => {
    const slow = await startTestServer({ MEDIAD_SERVE_WORKERS: 'false', MEDIAD_BODY_TIMEOUT_SECONDS: '2' });
    try {
      const k = await slow.key();
      const ca = await fs.readFile(slow.server.caCertPath!, 'utf8');
      const socket = tls.connect({
        host: '127.0.0.1',
        port: Number(new URL(slow.base).port),
        ca,
        servername: 'localhost',
      });
      await new Promise((resolve) => socket.once('secureConnect', resolve));
      const body = JSON.stringify({ title: 'x'.repeat(100) });
      socket.write(
        `POST /media HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${k.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      let answer = '';
      socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
      const closed = new Promise((resolve) => socket.once('close', resolve));
      // One byte every 250 ms: the whole body would take 30 s; Node alone would wait 300 s.
      let sent = 0;
      const trickle = setInterval(() => {
        if (sent < body.length && !socket.destroyed) socket.write(body[sent++]!);
      }, 250);
      await closed;
      clearInterval(trickle);
      assert.match(answer, /^HTTP\/1\.1 408 /, answer);
      assert.match(answer, /"code":"request_timeout"/);
      assert.ok(sent < body.length, `the body was refused before it was sent whole (${sent} of ${body.length} bytes)`);
      // A steady body is not affected.
      const quick = await slow.call('POST', '/media', { key: k.key, body: { metadata: { note: 'y'.repeat(5000) } } });
      assert.equal(quick.status, 201, quick.text);
    } finally {
      await slow.stop();
    }
  });
});
