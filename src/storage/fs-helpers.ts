import { closeSync, fsync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { promisify } from 'node:util';

// Small fs wrappers shared by the disk blob store.

/** fsync a file (data and size) and return its stat; directories are only stat'ed. */
export async function syncFile(file: string, flags: 'r' | 'r+') {
  const fh = await open(file, flags);
  try {
    const st = await fh.stat();
    if (st.isFile()) await fh.sync();
    return st;
  } finally {
    await fh.close();
  }
}

/** fsync an open descriptor, in libuv's thread pool (it waits for the disk). */
export const fsyncFd: (fd: number) => Promise<void> = promisify(fsync);

/** fsync a directory: opened and closed synchronously (microseconds), its fsync in the pool. */
export async function fsyncDir(dir: string): Promise<void> {
  const fd = openSync(dir, 'r');
  try {
    await fsyncFd(fd);
  } finally {
    closeSync(fd);
  }
}

export const errCode = (err: unknown) => (err as NodeJS.ErrnoException | null)?.code;

/** ENOENT/ENOTDIR mean "no such blob": resolve to undefined; rethrow anything else. */
export function ignoreMissing(err: unknown): undefined {
  const code = errCode(err);
  if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
  throw err;
}
