import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { coalesce, COALESCE_BYTES } from '../../src/api/uploads-tus.js';

async function* pieces(sizes: number[], data: Buffer): AsyncGenerator<Buffer> {
  let at = 0;
  for (const n of sizes) {
    yield data.subarray(at, at + n);
    at += n;
  }
}

describe('coalesce (a tus body regrouped for the library)', () => {
  it('passes every byte in order, in pieces of COALESCE_BYTES but the last', async () => {
    // TLS-record-sized pieces, odd ones, and one larger than a piece.
    const sizes = [16_384, 16_384, 1, 5_000, COALESCE_BYTES * 2 + 17, 16_384, 3];
    const data = randomBytes(sizes.reduce((a, b) => a + b, 0));
    const out: Buffer[] = [];
    for await (const p of coalesce(pieces(sizes, data))) out.push(p);
    assert.ok(out.length > 1);
    for (const p of out.slice(0, -1)) assert.equal(p.length, COALESCE_BYTES);
    assert.ok(out.at(-1)!.length > 0 && out.at(-1)!.length <= COALESCE_BYTES);
    assert.ok(Buffer.concat(out).equals(data));
  });

  it('yields nothing for an empty body, and one short piece for a short one', async () => {
    const none: Buffer[] = [];
    for await (const p of coalesce(pieces([], Buffer.alloc(0)))) none.push(p);
    assert.equal(none.length, 0);
    const short: Buffer[] = [];
    for await (const p of coalesce(pieces([10], Buffer.from('0123456789')))) short.push(p);
    assert.deepEqual(short.map(String), ['0123456789']);
  });
});
