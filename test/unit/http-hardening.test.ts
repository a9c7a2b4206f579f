import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../src/http/canonical-json.js';
import { clientErrorToAppError } from '../../src/http/client-error.js';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH, valueProblems } from '../../src/http/json-body.js';
import { splitResponses } from '../helpers/raw-http.js';
import { makeRandom } from '../helpers/fuzz-random.js';

/** The recursive form the fingerprint used before; kept here as the reference for equal output. */
function recursiveCanonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(recursiveCanonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${recursiveCanonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

describe('canonicalJson (the Idempotency-Key fingerprint)', () => {
  it('writes exactly what the recursive form wrote, so stored fingerprints still match', () => {
    const rnd = makeRandom(7);
    for (let i = 0; i < 500; i++) {
      const value = rnd.jsonValue(6);
      assert.equal(canonicalJson(value), recursiveCanonical(value), JSON.stringify(value));
    }
    assert.equal(
      canonicalJson({ b: [1, { d: null, c: 'x' }], a: true, '': -0 }),
      '{"":0,"a":true,"b":[1,{"c":"x","d":null}]}',
    );
    assert.equal(canonicalJson([undefined, 'é\u2028']), '[null,"é\u2028"]');
  });

  it('serialises any depth without overflowing the stack', () => {
    let deep: unknown = 1;
    let expected = '1';
    for (let i = 0; i < 100_000; i++) {
      deep = i % 2 ? [deep] : { k: deep };
      expected = i % 2 ? `[${expected}]` : `{"k":${expected}}`;
    }
    assert.equal(canonicalJson(deep), expected);
    assert.throws(() => recursiveCanonical(deep), RangeError);
  });
});

describe('JSON body limits', () => {
  it('measures nesting outside strings only', () => {
    const nest = (n: number) => '['.repeat(n) + ']'.repeat(n);
    assert.equal(jsonNestsDeeperThan(nest(MAX_JSON_DEPTH), MAX_JSON_DEPTH), false);
    assert.equal(jsonNestsDeeperThan(nest(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH), true);
    assert.equal(jsonNestsDeeperThan(`{"a":"${'['.repeat(500)}"}`, 2), false);
    assert.equal(
      jsonNestsDeeperThan(`{"a":"\\"${'{'.repeat(500)}"}`, 2),
      false,
      'an escaped quote does not end the string',
    );
    assert.equal(jsonNestsDeeperThan(`{"a":"\\\\",  "b":[[[1]]]}`, 3), true, 'an escaped backslash does');
    assert.equal(jsonNestsDeeperThan('[]'.repeat(10_000), 1), false, 'siblings are not nesting');
  });

  it('names every non-finite number and every U+0000 by its path', () => {
    const fields = (v: unknown, nul?: boolean) => valueProblems(v, nul).map((p) => p.field);
    const value = JSON.parse('{"a":1e999,"b":[0,-1e999,{"c":1e-999}],"d":{"e":1.7e308,"s":"x\\u0000"},"k\\u0000":1}');
    assert.deepEqual(fields(value), ['a', 'b[1]', 'd.s', 'k\\u0000']);
    assert.deepEqual(fields(value, false), ['a', 'b[1]']);
    assert.deepEqual(fields(Infinity), ['body']);
    assert.deepEqual(fields({ x: 'Infinity', y: '\\u0000 as text' }), []);
  });
});

describe('client errors', () => {
  it('maps Node parser errors to catalogue codes', () => {
    const err = (code: string) => Object.assign(new Error('x'), { code });
    assert.equal(clientErrorToAppError(err('HPE_HEADER_OVERFLOW')).status, 431);
    assert.equal(clientErrorToAppError(err('HPE_HEADER_OVERFLOW')).code, 'headers_too_large');
    assert.equal(clientErrorToAppError(err('ERR_HTTP_REQUEST_TIMEOUT')).code, 'request_timeout');
    const bad = clientErrorToAppError(
      Object.assign(new Error('x'), { code: 'HPE_INVALID_HEADER_TOKEN', reason: 'Invalid header token' }),
    );
    assert.equal(bad.code, 'bad_request');
    assert.match(bad.message, /Invalid header token/);
  });

  it('the raw response splitter reads Content-Length, chunked and 1xx answers', () => {
    const raw = Buffer.from(
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP/1.1 400 Bad\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nHTTP/1.1 5',
    );
    const { responses, rest } = splitResponses(raw);
    assert.deepEqual(
      responses.map((r) => [r.status, r.body.toString()]),
      [
        [200, 'hi'],
        [400, 'abc'],
      ],
    );
    assert.equal(rest.toString(), 'HTTP/1.1 5');
  });
});
