import fs from 'node:fs/promises';
import path from 'node:path';
import { FileStore } from '@tus/file-store';
import type { DataStore } from '@tus/utils';

// Where unfinished resumable uploads (tus) keep their bytes: a directory of the data dir, one
// file per upload (`<id>`) and its tus record (`<id>.json`). It sits next to the blob store on
// the same filesystem, so a finished upload becomes a file by a rename, not a copy. With S3 blob
// storage the partial uploads stay here too (see docs/uploads.md: scale-out needs this directory
// shared, or one upload's requests sent to one process).

export interface UploadStore {
  datastore: DataStore;
  /** The local file holding an upload's bytes. */
  localPath(id: string): string;
  /** Removes an upload's bytes and record; nothing to remove is fine. */
  remove(id: string): Promise<void>;
  /** Uploads present (by their record), with the time the record was last written. */
  list(): Promise<{ id: string; modified: Date }[]>;
}

const ID = /^[A-Za-z0-9_-]{1,64}$/;

export function createDiskUploadStore(directory: string, expiryMs: number): UploadStore {
  const datastore = new FileStore({ directory, expirationPeriodInMilliseconds: expiryMs });
  const localPath = (id: string) => {
    if (!ID.test(id)) throw new Error(`not an upload id: ${id}`);
    return path.join(directory, id);
  };
  return {
    datastore,
    localPath,
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
        if (!ID.test(id) || (name === id && names.includes(`${id}.json`))) continue;
        const st = await fs.stat(path.join(directory, name)).catch(() => null);
        if (st) found.push({ id, modified: st.mtime });
      }
      return found;
    },
  };
}
