import { PassThrough, type Readable, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Lock, Locker } from '@tus/utils';

// A PATCH's body, handed to the upload store past the tus library's own stream chain.
//
// The library reads a body as a Web stream, turns it back into a Node stream (Readable.fromWeb),
// and passes it through a PassThrough and its size limiter before the store's write sees it: a
// few promises and stream hops per piece, which made a tus upload cost ~35% more server CPU per
// GB than a plain PUT of the same file (1 GB, 8 MiB chunks: 0.73x the PUT by CPU; handed over:
// 1.02x; docs/benchmarks.md, "Resumable uploads"). The library keeps every rule of the protocol
// (lock, offset, length, expiry, hooks, answers); only the bytes take a shorter way.
//
// The hand-off is bound to its request, not to the upload's id (two PATCHes of one upload may be
// in flight, one waiting for the lock): the library is given a body of one 1-byte token, and
// the store's write, finding that token first in the stream it is given, writes the body the
// token stands for. The library counts the token against the request's Content-Length, so only a
// body that declares at least one byte is handed over (the route sends the others the long way).
//
// The library stops a body it reads when its request is aborted (another request asked for the
// upload's lock and waited `lockDrainTimeout`, or the client went away): the bytes received so
// far are kept, the rest is left. The locker given to the library is wrapped to note each lock
// holder's stop signal, so a handed body stops at the same moment.

export interface HandedBody {
  /** The bytes to write: the handed body, or the stream the store was given. */
  body: Readable;
  /** Aborted when the library stops this request (handed bodies only). */
  stop?: AbortSignal;
}

export class BodyHandoff {
  readonly #bodies = new WeakMap<ArrayBufferLike, Readable>();
  readonly #stops = new Map<string, AbortSignal>();

  /** The Web body to give the library in place of `body`, whose Content-Length must be at least 1. */
  token(body: Readable): ReadableStream<Uint8Array> {
    const token = new Uint8Array(1);
    this.#bodies.set(token.buffer, body);
    return new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(token);
        controller.close();
      },
    });
  }

  /** `locker`, noting each holder's stop signal by upload id while it holds the lock. */
  tracking(locker: Locker): Locker {
    const stops = this.#stops;
    return {
      newLock(id: string): Lock {
        const inner = locker.newLock(id);
        let held: AbortSignal | undefined;
        return {
          async lock(signal, requestRelease) {
            await inner.lock(signal, requestRelease);
            held = signal;
            stops.set(id, signal);
          },
          async unlock() {
            if (held && stops.get(id) === held) stops.delete(id);
            held = undefined;
            await inner.unlock();
          },
        };
      },
    };
  }

  /** In a store's write of upload `id`: what to write, given what the library passed (`readable`). */
  async take(readable: Readable, id: string): Promise<HandedBody> {
    const first = await firstChunk(readable);
    const body = first ? this.#bodies.get(first.buffer) : undefined;
    if (first && body && first.byteLength === 1) {
      this.#bodies.delete(first.buffer);
      readable.resume(); // the token's stream ends here: the library's chain completes
      return { body, stop: this.#stops.get(id) };
    }
    if (first) readable.unshift(first);
    return { body: readable };
  }
}

/** The first chunk a stream gives, or null if it ends first; the stream is left paused. */
function firstChunk(readable: Readable): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const done = () => {
      readable.off('readable', attempt);
      readable.off('end', ended);
      readable.off('error', failed);
    };
    const attempt = () => {
      const chunk = readable.read() as Buffer | null;
      if (chunk === null) return;
      done();
      resolve(chunk);
    };
    const ended = () => {
      done();
      resolve(null);
    };
    const failed = (err: unknown) => {
      done();
      reject(err);
    };
    readable.on('readable', attempt);
    readable.once('end', ended);
    readable.once('error', failed);
  });
}

/**
 * Pipes `body` into `out` and ends `out` when `body` ends, fails (the client went away) or `stop`
 * is aborted: what arrived until then is written, as the library does with a body it reads.
 * Await `finished(out)` for the end.
 */
export function drain(body: Readable, out: Writable, stop?: AbortSignal): void {
  const end = () => {
    body.unpipe(out);
    if (!out.writableEnded) out.end();
  };
  const cleanup = () => {
    stop?.removeEventListener('abort', end);
    body.off('error', end);
  };
  body.on('error', end);
  stop?.addEventListener('abort', end, { once: true });
  finished(out).then(cleanup, cleanup);
  if (stop?.aborted) end();
  else body.pipe(out);
}

/** `body` as a stream that ends (instead of failing or going on) as `drain` ends its output. */
export function stoppable(body: Readable, stop?: AbortSignal): Readable {
  const out = new PassThrough({ highWaterMark: 1024 * 1024 });
  drain(body, out, stop);
  return out;
}
