import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import type { DataStore, KvStore } from '@tus/utils';
import type { BlobStat } from './blob-store.js';
import { BodyHandoff, drain } from './tus-handoff.js';

// Where unfinished resumable uploads (tus) keep their bytes, through the tus library's stores:
// - disk (the default, and with disk blob storage): a directory of the data dir, one file per
//   upload (`<id>`) and its tus record (`<id>.json`), next to the blob store on the same
//   filesystem, so a finished upload becomes a file by a hard link, not a copy;
// - S3 (with S3 blob storage, ./tus-s3-store.ts): a multipart upload per upload under
//   `<prefix>/uploads/` in the bucket, so processes on different machines share nothing but the
//   bucket (and the database's lock).
// The library's modules are imported on first use (the first tus request), not at start-up.

export interface UploadStore {
  /** PATCH bodies handed to this store's writes past the library's stream chain (./tus-handoff.ts). */
  readonly handoff: BodyHandoff;
  /** The tus library's store for these uploads (its module is imported on the first call). */
  datastore(): Promise<DataStore>;
  /** Makes `dest` a local file with a finished upload's bytes (disk: a hard link; S3: a download), to be probed. */
  fetch(id: string, dest: string): Promise<void>;
  /**
   * Puts a finished upload's bytes at the blob key `key` without passing them through this
   * process (S3: a copy inside the bucket); null when it cannot, and the local copy is put instead.
   */
  place(id: string, key: string): Promise<BlobStat | null>;
  /** Removes an upload's bytes and records (S3: aborts its multipart upload); nothing to remove is fine. */
  remove(id: string): Promise<void>;
  /** Uploads present, with the time they were last written. */
  list(): Promise<{ id: string; modified: Date }[]>;
}

export const UPLOAD_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** What a PATCH's body is gathered into before each write to its upload's file. */
const WRITE_BUFFER = 1024 * 1024;

export function createDiskUploadStore(directory: string, expiryMs: number): UploadStore {
  let store: Promise<DataStore> | undefined;
  const handoff = new BodyHandoff();
  const localPath = (id: string) => {
    if (!UPLOAD_ID.test(id)) throw new Error(`not an upload id: ${id}`);
    return path.join(directory, id);
  };
  return {
    handoff,
    datastore: () =>
      (store ??= Promise.all([import('@tus/file-store'), import('@tus/utils')]).then(
        ([{ FileStore, FileConfigstore }, { ERRORS }]) => {
          /**
           * The library's store, writing a PATCH's body through a 1 MiB buffer: the body comes in
           * TLS records (16 KiB; a body handed over by the route, ./tus-handoff.ts) or 64 KiB
           * pieces (one the library streams, api/uploads-tus.ts), which the library's write stream
           * (16 KiB buffer) wrote with one write() each, a trip to the thread pool apiece;
           * buffered, they go as one writev() per MiB, as a PUT's do. Otherwise as the library's.
           */
          class BatchedFileStore extends FileStore {
            override async write(readable: Readable, id: string, offset: number): Promise<number> {
              const { body, stop } = await handoff.take(readable, id).catch(() => {
                throw ERRORS.FILE_WRITE_ERROR;
              });
              const out = createWriteStream(localPath(id), { flags: 'r+', start: offset, highWaterMark: WRITE_BUFFER });
              try {
                if (body === readable) await pipeline(readable, out);
                else {
                  drain(body, out, stop);
                  await finished(out);
                }
              } catch {
                throw ERRORS.FILE_WRITE_ERROR;
              }
              return offset + out.bytesWritten;
            }
          }
          return new BatchedFileStore({
            directory,
            expirationPeriodInMilliseconds: expiryMs,
            // Each PATCH reads the upload's record: from memory once its length is known.
            configstore: knownLengthCache(new FileConfigstore(directory), (u) => u.size),
          });
        },
      )),
    async fetch(id, dest) {
      try {
        await fs.link(localPath(id), dest);
      } catch {
        await fs.copyFile(localPath(id), dest);
      }
    },
    place: async () => null, // the hard link is put (renamed) into the blob store: no copy either
    async remove(id) {
      const file = localPath(id);
      await fs.rm(file, { force: true });
      await fs.rm(`${file}.json`, { force: true });
    },
    async list() {
      const names = await fs.readdir(directory).catch(() => [] as string[]);
      const found: { id: string; modified: Date }[] = [];
      for (const name of names) {
        const id = name.endsWith('.json') ? name.slice(0, -5) : name;
        if (!UPLOAD_ID.test(id) || (name === id && names.includes(`${id}.json`))) continue;
        const st = await fs.stat(path.join(directory, name)).catch(() => null);
        if (st) found.push({ id, modified: st.mtime });
      }
      return found;
    },
  };
}

/**
 * The library's record of each upload, cached in memory once it has a length: a record with a
 * length never changes again (only a deferred length is set, once), so every process may keep it,
 * and the record is read from the store (a file, an S3 object) once per process instead of on
 * every HEAD and PATCH. Records without a length are read from the store each time (another
 * process may declare the length). At most `max` records are kept (the oldest go first).
 */
export function knownLengthCache<T>(
  inner: KvStore<T>,
  lengthOf: (value: T) => number | undefined,
  max = 10_000,
): KvStore<T> {
  const known = new Map<string, T>();
  const keep = (key: string, value: T) => {
    if (lengthOf(value) === undefined) return void known.delete(key);
    known.set(key, value);
    if (known.size > max) known.delete(known.keys().next().value!);
  };
  return {
    async get(key) {
      const cached = known.get(key);
      if (cached !== undefined) return cached;
      const value = await inner.get(key);
      if (value !== undefined) keep(key, value);
      return value;
    },
    async set(key, value) {
      known.delete(key);
      await inner.set(key, value);
      keep(key, value);
    },
    async delete(key) {
      known.delete(key);
      await inner.delete(key);
    },
    ...(inner.list ? { list: () => inner.list!() } : {}),
  };
}
