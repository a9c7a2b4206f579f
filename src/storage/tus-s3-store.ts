import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CopyObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { MetadataValue } from '@tus/s3-store';
import type { DataStore } from '@tus/utils';
import { createS3Client, s3ClientConfig, s3KeyRoot, type S3BlobStoreOptions } from './s3-blob-store.js';
import { isMissingObject } from './s3-helpers.js';
import { BodyHandoff, stoppable } from './tus-handoff.js';
import { knownLengthCache, UPLOAD_ID, type UploadStore } from './tus-store.js';
import { validateKey } from './keys.js';

// Partial tus uploads in the bucket, through the library's S3 store (@tus/s3-store): each upload
// is an S3 multipart upload at `<prefix>/uploads/<id>` (each PATCH adds parts of PART_SIZE; a tail
// under S3's 5 MiB minimum waits in `<id>.part` for the next PATCH), with its tus record in
// `<id>.info`. Every process reads an upload's state from the bucket (ListParts), so processes on
// different machines serve one upload's PATCHes (the lock is PostgreSQL's: db/advisory-locker.ts).
// At the last byte the multipart upload is completed into `<prefix>/uploads/<id>`, downloaded once
// to be probed, and copied inside the bucket to the file's key (CopyObject: not uploaded again).
//
// The library names objects by the bare upload id (it has no key prefix yet); a middleware on its
// client puts its keys under `<prefix>/uploads/`.

/** Parts of a PATCH are cut at this size (S3's minimum is 5 MiB): 10,000 parts make 80 GB. */
const PART_SIZE = 8 * 1024 * 1024;
/** A PATCH uploads this many parts at once (each is spooled to a temp file first: memory stays flat). */
const PARTS_IN_FLIGHT = 4;
/** CopyObject copies at most 5 GiB; a larger upload is put from the local copy instead. */
const MAX_COPY_BYTES = 5 * 1024 ** 3;

/** A cache that keeps nothing (what knownLengthCache does not keep is read from the bucket). */
const NO_CACHE = { get: async () => undefined, set: async () => {}, delete: async () => {} };

export function createS3UploadStore(
  opts: Pick<S3BlobStoreOptions, 'bucket' | 'prefix' | 'endpoint' | 'region' | 'forcePathStyle'>,
  expiryMs: number,
): UploadStore {
  const Bucket = opts.bucket;
  const blobRoot = s3KeyRoot(opts.prefix);
  const root = `${blobRoot}uploads/`;
  const client: S3Client = createS3Client(opts);
  let store: Promise<DataStore> | undefined;
  const handoff = new BodyHandoff();
  const keyOf = (id: string) => {
    if (!UPLOAD_ID.test(id)) throw new Error(`not an upload id: ${id}`);
    return `${root}${id}`;
  };

  /** The multipart uploads under `prefix` (of this store's keys), all pages. */
  async function multipartUploads(prefix: string) {
    const found: { key: string; uploadId: string; initiated: Date }[] = [];
    let KeyMarker: string | undefined;
    let UploadIdMarker: string | undefined;
    for (;;) {
      const page = await client.send(
        new ListMultipartUploadsCommand({ Bucket, Prefix: prefix, KeyMarker, UploadIdMarker }),
      );
      for (const u of page.Uploads ?? [])
        if (u.Key && u.UploadId)
          found.push({ key: u.Key, uploadId: u.UploadId, initiated: u.Initiated ?? new Date(0) });
      if (!page.IsTruncated) return found;
      KeyMarker = page.NextKeyMarker;
      UploadIdMarker = page.NextUploadIdMarker;
    }
  }

  return {
    handoff,
    datastore: () =>
      (store ??= import('@tus/s3-store').then(({ S3Store }) => {
        class PrefixedS3Store extends S3Store {
          constructor() {
            super({
              s3ClientConfig: { ...s3ClientConfig(opts), bucket: Bucket },
              partSize: PART_SIZE,
              maxConcurrentPartUploads: PARTS_IN_FLIGHT,
              expirationPeriodInMilliseconds: expiryMs,
              // Expiry is mediad's sweep (services/media/uploads.ts), not S3 lifecycle tags.
              useTags: false,
              // The library's per-process cache of `.info`: only records with a known length (they
              // never change); one with a deferred length is read from the bucket each time, since
              // another process may declare it.
              cache: knownLengthCache<MetadataValue>(NO_CACHE, (v) => v.file.size),
            });
            this.client.middlewareStack.add(
              (next) => async (args) => next({ ...args, input: underPrefix(args.input, root) }),
              { step: 'initialize', name: 'mediadTusKeyPrefix' },
            );
          }

          /** A handed body (./tus-handoff.ts) is cut into parts as the library's stream would be. */
          override async write(readable: Readable, id: string, offset: number): Promise<number> {
            const { body, stop } = await handoff.take(readable, id);
            return super.write(body === readable ? readable : stoppable(body, stop), id, offset);
          }
        }
        return new PrefixedS3Store();
      })),

    async fetch(id, dest) {
      const res = await client.send(new GetObjectCommand({ Bucket, Key: keyOf(id) }));
      const body = res.Body as Readable | undefined;
      if (!body) throw new Error(`the finished upload ${id} has no body in the bucket`);
      await pipeline(body, createWriteStream(dest, { highWaterMark: 1024 * 1024 }));
    },

    async place(id, key) {
      const source = keyOf(id);
      const head = await client.send(new HeadObjectCommand({ Bucket, Key: source }));
      const size = head.ContentLength ?? 0;
      if (size > MAX_COPY_BYTES) return null;
      await client.send(
        new CopyObjectCommand({
          Bucket,
          Key: `${blobRoot}${validateKey(key)}`,
          CopySource: `${Bucket}/${source.split('/').map(encodeURIComponent).join('/')}`,
        }),
      );
      return { size, modified: new Date() };
    },

    async remove(id) {
      const Key = keyOf(id);
      // Every multipart upload at the key, not just the one the record names: a crash between
      // creating one and writing `.info` leaves one that only a listing finds.
      for (const u of await multipartUploads(Key))
        if (u.key === Key)
          await client
            .send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: u.uploadId }))
            .catch((err: unknown) => {
              if (!isNoSuchUpload(err)) throw err;
            });
      await client.send(
        new DeleteObjectsCommand({
          Bucket,
          Delete: { Objects: [{ Key }, { Key: `${Key}.info` }, { Key: `${Key}.part` }], Quiet: true },
        }),
      );
    },

    async list() {
      const latest = new Map<string, Date>();
      const note = (key: string, when: Date) => {
        const id = key.slice(root.length).replace(/\.(info|part)$/, '');
        if (!UPLOAD_ID.test(id)) return;
        const seen = latest.get(id);
        if (!seen || seen < when) latest.set(id, when);
      };
      for (const u of await multipartUploads(root)) note(u.key, u.initiated);
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: root, ContinuationToken }));
        for (const o of page.Contents ?? []) if (o.Key) note(o.Key, o.LastModified ?? new Date(0));
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
      return [...latest].map(([id, modified]) => ({ id, modified }));
    },
  };
}

const isNoSuchUpload = (err: unknown) =>
  err instanceof Error && (err.name === 'NoSuchUpload' || (err.name !== 'NoSuchBucket' && isMissingObject(err)));

/** An S3 command's input with its object keys under `root` (Key, and DeleteObjects' keys). */
export function underPrefix(input: object, root: string): object {
  const out: Record<string, unknown> = { ...input };
  if (typeof out.Key === 'string') out.Key = `${root}${out.Key}`;
  const del = out.Delete;
  if (del && typeof del === 'object' && 'Objects' in del && Array.isArray(del.Objects))
    out.Delete = {
      ...del,
      Objects: del.Objects.map((o: unknown) =>
        o && typeof o === 'object' && 'Key' in o && typeof o.Key === 'string' ? { ...o, Key: `${root}${o.Key}` } : o,
      ),
    };
  return out;
}
