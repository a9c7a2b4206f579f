import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { pipeline, type Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { AppError } from '../errors.js';
import type { BlobStat, BlobStore, PresignGetOptions } from './blob-store.js';
import { isValidKey, validateKey, validatePrefix } from './keys.js';
import { byteCounter, checkRangeShape, exactRange, isInvalidRange, isMissingObject, pastTheEnd } from './s3-helpers.js';

// Bounded memory for uploads of any size: lib-storage holds at most QUEUE_SIZE parts in flight
// plus the one being filled, so about (QUEUE_SIZE + 1) * PART_SIZE = 32 MiB per upload.
// 8 MiB parts allow objects up to 80 GB (S3's 10,000-part limit), far above MEDIAD_MAX_FILE_BYTES' default.
const PART_SIZE = 8 * 1024 * 1024;
const QUEUE_SIZE = 3;
const READ_CHUNK = 1024 * 1024;

export interface S3BlobStoreOptions {
  bucket: string;
  /** Keys live under `<prefix>/` in the bucket; '' for the bucket's root. */
  prefix: string;
  /** An S3-compatible server's URL (MinIO, s3rver...); null for AWS itself. */
  endpoint: string | null;
  region: string;
  forcePathStyle: boolean;
  /** Keys per ListObjectsV2 request; S3's default (and maximum) is 1000. */
  listPageSize?: number;
  /** A ready client (tests spy on it); otherwise one is made with the SDK's usual credential chain. */
  client?: S3Client;
}

export interface S3BlobStore extends BlobStore {
  presignGet(key: string, opts: PresignGetOptions): Promise<string>;
}

export function createS3BlobStore(opts: S3BlobStoreOptions): S3BlobStore {
  const client = opts.client ?? createS3Client(opts);
  const Bucket = opts.bucket;
  const root = s3KeyRoot(opts.prefix);
  const objectKey = (key: string) => `${root}${validateKey(key)}`;

  // Atomicity: a PutObject or a CompleteMultipartUpload makes the object visible all at once
  // (readers see the old version or the new one, never part of one), and an upload that fails
  // is aborted, so no partial object is ever visible under a key. No temp-name-then-rename needed.
  async function upload(Key: string, Body: Readable, contentType?: string): Promise<void> {
    const up = new Upload({
      client,
      params: { Bucket, Key, Body, ContentType: contentType },
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
    });
    await up.done();
  }

  return {
    async putFile(key, localPath, putOpts = {}) {
      const Key = objectKey(key);
      const st = await stat(localPath);
      if (!st.isFile()) throw new Error(`putFile: ${localPath} is not a regular file`);
      const body = createReadStream(localPath, { highWaterMark: READ_CHUNK });
      try {
        await upload(Key, body, putOpts.contentType);
      } finally {
        body.destroy();
      }
      await rm(localPath, { force: true });
      return { size: st.size, modified: new Date() };
    },

    async putStream(key, body, putOpts = {}) {
      const Key = objectKey(key);
      const maxBytes = putOpts.maxBytes ?? Infinity;
      if (!(maxBytes >= 0)) throw new RangeError('maxBytes must be >= 0');
      const counter = byteCounter(maxBytes);
      // The callback form: errors of `body` reach the upload through `counter`, and destroying
      // `counter` after a failed upload destroys `body` too (an oversized body is not read to the end).
      let bodyError: unknown;
      pipeline(body, counter, (err) => (bodyError = err));
      try {
        await upload(Key, counter, putOpts.contentType);
      } catch (err) {
        counter.destroy();
        // The body's own failure (too large, client gone) is the cause, even when aborting the
        // multipart upload then failed too and lib-storage reports that instead.
        throw bodyError ?? err;
      }
      return { size: counter.bytes(), modified: new Date() };
    },

    async stat(key) {
      try {
        const head = await client.send(new HeadObjectCommand({ Bucket, Key: objectKey(key) }));
        return toStat(head.ContentLength, head.LastModified);
      } catch (err) {
        if (isMissingObject(err)) return null;
        throw err;
      }
    },

    async read(key, range) {
      const Key = objectKey(key);
      if (range) checkRangeShape(range);
      try {
        const res = await client.send(
          new GetObjectCommand({ Bucket, Key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
        );
        const body = res.Body as Readable;
        return range ? exactRange(body, range, res.ContentRange, res.ContentLength) : body;
      } catch (err) {
        if (isMissingObject(err)) throw new AppError('not_found', 'Blob not found');
        if (range && isInvalidRange(err)) throw pastTheEnd();
        throw err;
      }
    },

    localPath: () => null,

    async delete(key) {
      try {
        await client.send(new DeleteObjectCommand({ Bucket, Key: objectKey(key) }));
      } catch (err) {
        if (!isMissingObject(err)) throw err;
      }
    },

    async *list(prefix) {
      validatePrefix(prefix);
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({
            Bucket,
            Prefix: `${root}${prefix}`,
            ContinuationToken,
            MaxKeys: opts.listPageSize,
          }),
        );
        for (const obj of page.Contents ?? []) {
          const key = obj.Key?.startsWith(root) ? obj.Key.slice(root.length) : null;
          if (key && isValidKey(key)) yield key; // skips the health probe's '.probe/' objects
        }
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
    },

    async checkWritable() {
      // A key starting with '.' can never be a blob key, so a concurrent list() never shows it.
      const Key = `${root}.probe/${randomBytes(12).toString('hex')}`;
      try {
        await client.send(new PutObjectCommand({ Bucket, Key, Body: 'ok' }));
        await client.send(new DeleteObjectCommand({ Bucket, Key }));
      } catch (err) {
        const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        throw new AppError('service_unavailable', `Blob storage (S3 bucket "${Bucket}") is not writable: ${why}`, {
          cause: err,
        });
      }
    },

    async presignGet(key, presign) {
      const command = new GetObjectCommand({
        Bucket,
        Key: objectKey(key),
        ResponseContentType: presign.contentType,
        ResponseContentDisposition: presign.contentDisposition,
      });
      return getSignedUrl(client, command, { expiresIn: presign.expiresSeconds });
    },
  };
}

/** Credentials come from the SDK's default chain (env, shared config files, SSO, container/instance roles). */
export function createS3Client(opts: Pick<S3BlobStoreOptions, 'endpoint' | 'region' | 'forcePathStyle'>): S3Client {
  return new S3Client(s3ClientConfig(opts));
}

/** Where a store's keys start in the bucket: `<prefix>/`, or '' for the bucket's root. */
export function s3KeyRoot(prefix: string): string {
  const base = prefix.replace(/^\/+|\/+$/g, '');
  return base ? `${base}/` : '';
}

/** The S3 client's settings (also given to @tus/s3-store, which makes its own client). */
export function s3ClientConfig(
  opts: Pick<S3BlobStoreOptions, 'endpoint' | 'region' | 'forcePathStyle'>,
): S3ClientConfig {
  // Only AWS itself is sure to accept the SDK's newer default request checksums (CRC32 with
  // aws-chunked bodies); other S3-compatible servers often refuse them, so send them only when required.
  const thirdParty = opts.endpoint !== null;
  return {
    region: opts.region,
    endpoint: opts.endpoint ?? undefined,
    forcePathStyle: opts.forcePathStyle,
    requestChecksumCalculation: thirdParty ? 'WHEN_REQUIRED' : 'WHEN_SUPPORTED',
    responseChecksumValidation: thirdParty ? 'WHEN_REQUIRED' : 'WHEN_SUPPORTED',
    // Streamed deliveries hold a socket each for as long as the client downloads: the default of 50 is low.
    requestHandler: {
      httpAgent: { keepAlive: true, maxSockets: 512 },
      httpsAgent: { keepAlive: true, maxSockets: 512 },
      connectionTimeout: 10_000,
    },
  };
}

function toStat(size: number | undefined, modified: Date | undefined): BlobStat {
  return { size: size ?? 0, modified: modified ?? new Date() };
}
