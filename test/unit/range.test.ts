import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { etagMatches, parseRange } from '../../src/http/range.js';

describe('parseRange (RFC 9110 14.1)', () => {
  it('serves single byte ranges, clamping the end and long suffixes', () => {
    assert.deepEqual(parseRange('bytes=0-0', 10), { kind: 'partial', start: 0, end: 0 });
    assert.deepEqual(parseRange('bytes=2-', 10), { kind: 'partial', start: 2, end: 9 });
    assert.deepEqual(parseRange('bytes=-3', 10), { kind: 'partial', start: 7, end: 9 });
    assert.deepEqual(parseRange('bytes=-30', 10), { kind: 'partial', start: 0, end: 9 });
    assert.deepEqual(parseRange('bytes=5-99999999999999999999', 10), { kind: 'partial', start: 5, end: 9 });
    assert.deepEqual(parseRange(' bytes= 1 - 2 ', 10), { kind: 'partial', start: 1, end: 2 });
  });

  it('is unsatisfiable past the end, for a zero suffix and for an empty file', () => {
    for (const [h, size] of [
      ['bytes=10-', 10],
      ['bytes=10-20', 10],
      ['bytes=-0', 10],
      ['bytes=0-', 0],
      ['bytes=-5', 0],
      ['bytes=5-2', 10],
    ] as const) {
      assert.deepEqual(parseRange(h, size), { kind: 'unsatisfiable' }, h);
    }
  });

  it('falls back to the whole body for no header, multiple ranges, other units and garbage', () => {
    for (const h of [
      undefined,
      '',
      'bytes=0-1,3-4',
      'items=0-1',
      'bytes=-',
      'bytes=a-b',
      'bytes=1.5-2',
      'bytes=-1-2',
    ]) {
      assert.deepEqual(parseRange(h, 10), { kind: 'full' }, String(h));
    }
  });
});

describe('etagMatches (weak comparison, for If-None-Match)', () => {
  it('matches the tag, its weak form, a list member and *', () => {
    for (const h of ['"a"', 'W/"a"', '"x", "a"', '"x",W/"a"', '*', ' * ']) assert.equal(etagMatches(h, '"a"'), true, h);
  });

  it('does not match other tags, substrings or a missing header', () => {
    for (const h of [undefined, '', '"b"', '"ab"', 'a', '"a', '"x", "y"'])
      assert.equal(etagMatches(h, '"a"'), false, String(h));
  });
});
