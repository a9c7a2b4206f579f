import { Readable, Transform } from 'node:stream';
import { AppError } from '../errors.js';
import type { ByteRange } from './blob-store.js';

// Small pieces of the S3 blob store: error classification and range handling.

interface S3ErrorLike {
  name?: string;
  $metadata?: { httpStatusCode?: number };
}

const s3Status = (err: unknown) => (err as S3ErrorLike | null)?.$metadata?.httpStatusCode;
const s3Name = (err: unknown) => (err as S3ErrorLike | null)?.name;

/** A 404 for the object (HeadObject has no body, so its 404 is just 'NotFound'); a missing bucket is not "no blob". */
export function isMissingObject(err: unknown): boolean {
  const name = s3Name(err);
  return name === 'NoSuchKey' || name === 'NotFound' || (s3Status(err) === 404 && name !== 'NoSuchBucket');
}

export function isInvalidRange(err: unknown): boolean {
  return s3Name(err) === 'InvalidRange' || s3Status(err) === 416;
}

/** Same refusals as the disk store's clampRange, checked before any request. */
export function checkRangeShape(range: ByteRange): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new AppError('bad_request', 'Invalid byte range');
  }
}

export const pastTheEnd = () => new AppError('bad_request', 'Byte range starts past the end of the blob');

/**
 * Makes a ranged GetObject body exactly the requested bytes. S3 answers `bytes=a-b` with just
 * those bytes, but some S3-compatible servers do not: s3rver answers `bytes=0-0` with the whole
 * object, and a server may ignore Range altogether (200 with the full body). Content-Range (or
 * its absence) says what came back, so the body is trimmed to the requested slice when needed.
 */
export function exactRange(
  body: Readable,
  range: ByteRange,
  contentRange: string | undefined,
  contentLength: number | undefined,
): Readable {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(contentRange ?? '');
  const got = m
    ? { start: Number(m[1]), end: Number(m[2]), size: m[3] === '*' ? Infinity : Number(m[3]) }
    : { start: 0, end: (contentLength ?? 0) - 1, size: contentLength ?? 0 };
  if (range.start >= got.size) {
    body.destroy();
    throw pastTheEnd();
  }
  const wantEnd = Math.min(range.end, got.size - 1);
  if (got.start === range.start && got.end <= wantEnd) return body;
  if (got.start > range.start || got.end < wantEnd) {
    body.destroy();
    throw new Error(`S3 answered Range bytes=${range.start}-${range.end} with ${contentRange ?? 'the whole object'}`);
  }
  return Readable.from(slice(body, range.start - got.start, wantEnd - range.start + 1), { objectMode: false });
}

/** Drops `skip` bytes, yields `take` bytes, then stops (leaving the loop destroys the source). */
async function* slice(source: Readable, skip: number, take: number): AsyncGenerator<Buffer> {
  for await (const chunk of source as AsyncIterable<Buffer>) {
    const from = Math.min(skip, chunk.length);
    skip -= from;
    const part = chunk.subarray(from, from + take);
    take -= part.length;
    if (part.length > 0) yield part;
    if (take === 0) return;
  }
}

/** Counts bytes on their way to S3; past `maxBytes` it fails the stream with payload_too_large. */
export function byteCounter(maxBytes: number): Transform & { bytes: () => number } {
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer | string, _enc, done) {
      seen += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
      if (seen > maxBytes) done(new AppError('payload_too_large', `Body exceeds the limit of ${maxBytes} bytes`));
      else done(null, chunk);
    },
  });
  return Object.assign(counter, { bytes: () => seen });
}
