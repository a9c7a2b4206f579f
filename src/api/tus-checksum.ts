import { createHash, type Hash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { AppError } from '../errors.js';

// The tus checksum extension, which @tus/server does not implement: a PATCH may carry
// `Upload-Checksum: <algorithm> <base64 digest>` of its body. The body is spooled to a scratch
// file while it is hashed, and only a matching chunk is passed on to the store (a mismatch
// answers 460 and keeps nothing). PATCHes without the header stream straight through.

export const CHECKSUM_ALGORITHMS = ['sha1', 'sha256', 'md5'] as const;
export type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];

export interface Checksum {
  algorithm: ChecksumAlgorithm;
  digest: string;
}

const isAlgorithm = (s: string): s is ChecksumAlgorithm => (CHECKSUM_ALGORITHMS as readonly string[]).includes(s);

/** The Upload-Checksum header, or undefined; an unsupported algorithm or a malformed value is a 400. */
export function parseChecksum(header: string | undefined): Checksum | undefined {
  if (header === undefined) return undefined;
  const m = /^([a-z0-9-]+) ([A-Za-z0-9+/]+={0,2})$/.exec(header.trim());
  if (!m)
    throw new AppError('bad_request', 'Upload-Checksum must be "<algorithm> <base64 digest>"', {
      details: [{ field: 'Upload-Checksum', message: 'malformed' }],
    });
  const algorithm = m[1]!;
  if (!isAlgorithm(algorithm))
    throw new AppError(
      'bad_request',
      `Upload-Checksum: the algorithm ${algorithm} is not supported; use ${CHECKSUM_ALGORITHMS.join(', ')}`,
      { details: [{ field: 'Upload-Checksum', message: 'unsupported algorithm' }] },
    );
  return { algorithm, digest: m[2]! };
}

/** Streams `body` to `dest` while hashing it; a digest other than the header's is a 460 checksum_mismatch. */
export async function spoolVerified(body: Readable, dest: string, checksum: Checksum): Promise<number> {
  const hash: Hash = createHash(checksum.algorithm);
  let size = 0;
  await pipeline(
    body,
    async function* (source: AsyncIterable<Buffer>) {
      for await (const chunk of source) {
        hash.update(chunk);
        size += chunk.length;
        yield chunk;
      }
    },
    createWriteStream(dest, { highWaterMark: 1024 * 1024 }),
  );
  const actual = hash.digest('base64');
  if (actual !== checksum.digest)
    throw new AppError(
      'checksum_mismatch',
      `the chunk's ${checksum.algorithm} is ${actual}, not ${checksum.digest} (Upload-Checksum): it was not kept; send it again`,
    );
  return size;
}
