import assert from 'node:assert/strict';
import { PassThrough, Readable, Transform } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { describe, it } from 'node:test';
import { MemoryLocker } from '@tus/server';
import { BodyHandoff, drain } from '../../src/storage/tus-handoff.js';

// A PATCH body handed to the upload store past the tus library's stream chain: the library gets a
// 1-byte token, and the store's write finds the body the token stands for in what it is given.

/** What the library does with a Web body before the store's write sees it (BaseHandler.writeToStore). */
function asTheLibraryPassesIt(web: ReadableStream<Uint8Array>): Readable {
  const proxy = new PassThrough();
  const limiter = new Transform({ transform: (chunk, _e, done) => done(null, chunk) });
  void pipeline(Readable.fromWeb(web as import('node:stream/web').ReadableStream<Uint8Array>).pipe(proxy), limiter);
  return limiter;
}

async function bytesOf(r: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

/** A writable collecting what it is given. */
function sink() {
  const parts: Buffer[] = [];
  const out = new PassThrough();
  out.on('data', (c: Buffer) => parts.push(c));
  return { out, bytes: () => Buffer.concat(parts) };
}

describe('tus body hand-off', () => {
  it('the token survives the library streams, and the store gets the body with the lock holder’s stop signal', async () => {
    const handoff = new BodyHandoff();
    const locker = handoff.tracking(new MemoryLocker());
    const lock = locker.newLock('upl_a');
    const holder = new AbortController();
    await lock.lock(holder.signal, () => {});
    const body = Readable.from([Buffer.from('hello '), Buffer.from('world')]);
    const given = asTheLibraryPassesIt(handoff.token(body));
    const taken = await handoff.take(given, 'upl_a');
    assert.equal(taken.body, body);
    assert.equal(taken.stop, holder.signal);
    await finished(given); // the library's own chain completes
    assert.equal((await bytesOf(taken.body)).toString(), 'hello world');
    await lock.unlock();
    const again = await handoff.take(asTheLibraryPassesIt(handoff.token(Readable.from([]))), 'upl_a');
    assert.equal(again.stop, undefined, 'no stop signal once the lock is released');
  });

  it('a stream without a token is written as given, its first chunk included', async () => {
    const handoff = new BodyHandoff();
    const plain = asTheLibraryPassesIt(Readable.toWeb(Readable.from([Buffer.from('a'), Buffer.from('bc')])));
    const taken = await handoff.take(plain, 'upl_b');
    assert.equal(taken.body, plain);
    assert.equal(taken.stop, undefined);
    assert.equal((await bytesOf(taken.body)).toString(), 'abc');
    const empty = await handoff.take(asTheLibraryPassesIt(Readable.toWeb(Readable.from([]))), 'upl_b');
    assert.equal((await bytesOf(empty.body)).length, 0);
  });

  it('drain keeps what came when the body fails (the client went away) or the stop signal aborts', async () => {
    const failing = new PassThrough();
    const a = sink();
    drain(failing, a.out);
    failing.write(Buffer.from('kept'));
    await new Promise((r) => setImmediate(r));
    failing.destroy(new Error('aborted'));
    await finished(a.out);
    assert.equal(a.bytes().toString(), 'kept');

    const stalled = new PassThrough();
    const stop = new AbortController();
    const b = sink();
    drain(stalled, b.out, stop.signal);
    stalled.write(Buffer.from('so far'));
    await new Promise((r) => setImmediate(r));
    stop.abort();
    await finished(b.out);
    assert.equal(b.bytes().toString(), 'so far');
    stalled.write(Buffer.from(' and no more'));
    assert.equal(b.bytes().toString(), 'so far');
  });
});
