import type { Readable } from 'node:stream';

export interface BlobStat {
  size: number;
  modified: Date;
}

/** Inclusive on both ends, like an HTTP Range header. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface PresignGetOptions {
  expiresSeconds: number;
  /** Content-Type the store answers the presigned GET with. */
  contentType?: string;
  /** Content-Disposition the store answers the presigned GET with. */
  contentDisposition?: string;
}

/**
 * Where file bytes live. Keys come from ./keys.ts only and are checked with validateKey();
 * an invalid key is refused with AppError('bad_request'). Every implementation must pass
 * test/storage/blob-store-contract.ts.
 */
export interface BlobStore {
  /**
   * Moves (disk: rename when same filesystem, else copy+fsync) or uploads a complete local file
   * to `key`. Atomic: readers never see a partial blob. Durable once it returns (a new key's data
   * and directory entry may be flushed together, so a crash before that can leave the new key
   * incomplete: callers announce puts in the blob journal and commit what names a blob after it).
   * Takes ownership of `localPath`: after success it no longer exists; after a failure it is left
   * for the caller to remove.
   * `contentType` is a hint for remote stores; the disk store keeps no metadata.
   */
  putFile(key: string, localPath: string, opts?: { contentType?: string }): Promise<BlobStat>;
  /**
   * Streams into `key`; written to a temporary name and renamed only when complete (a crash or
   * stream error never leaves a partial blob visible, and an existing blob stays intact).
   * Past `maxBytes` it throws AppError('payload_too_large') and nothing stays. A failure while
   * writing destroys `body` (an oversized upload is not read to the end).
   */
  putStream(
    key: string,
    body: NodeJS.ReadableStream,
    opts?: { contentType?: string; maxBytes?: number },
  ): Promise<BlobStat>;
  /** null when there is no blob at `key`. */
  stat(key: string): Promise<BlobStat | null>;
  /**
   * Readable of the whole blob or an inclusive byte range; AppError('not_found') if missing.
   * An `end` past the blob is clamped (like S3); a `start` at or past the end, or a malformed
   * range, is AppError('bad_request') — HTTP callers check against stat() first and answer 416.
   */
  read(key: string, range?: ByteRange): Promise<Readable>;
  /** Local filesystem path when the store is on disk (lets ffprobe read in place); null for remote stores. */
  localPath(key: string): string | null;
  /** Idempotent: deleting a missing key succeeds. */
  delete(key: string): Promise<void>;
  /** Keys starting with `prefix` (plain string prefix, like S3: 'a/b' also matches 'a/bc/d'); order unspecified. */
  list(prefix: string): AsyncIterable<string>;
  /** Throws if the store cannot be written (used by the /health check). */
  checkWritable(): Promise<void>;
  /**
   * Optional (remote stores only): a time-limited URL where a client can GET the blob directly,
   * without this service's credentials. Range requests on it are served by the store.
   */
  presignGet?(key: string, opts: PresignGetOptions): Promise<string>;
}
