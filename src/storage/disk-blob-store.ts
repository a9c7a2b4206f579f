import { randomBytes } from 'node:crypto';
import {
  closeSync,
  createWriteStream,
  fstatSync,
  linkSync,
  mkdirSync,
  openSync,
  renameSync,
  unlinkSync,
} from 'node:fs';
import { copyFile, lstat, mkdir, open, readdir, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../errors.js';
import type { BlobStore, ByteRange } from './blob-store.js';
import { errCode, fsyncDir, fsyncFd, ignoreMissing, syncFile } from './fs-helpers.js';
import { isValidKey, validateKey, validatePrefix } from './keys.js';

const IO_CHUNK = 1024 * 1024; // 1 MiB: far fewer syscalls than the 64 KiB default for media-sized blobs

export interface DiskBlobStore extends BlobStore {
  readonly root: string;
  /** Removes temp files untouched for `olderThanMs` (leftovers of crashed writes); returns how many. */
  sweepTemp(olderThanMs: number): Promise<number>;
}

/**
 * Blobs as plain files under `rootDir` (key segments = directories). Writes go to `<root>/.tmp/`
 * (same filesystem) and are renamed into place, so a blob is either complete or absent.
 * A key cannot be both a blob and a "directory" of other keys ('a/b' and 'a/b/c'): AppError('conflict').
 */
export function createDiskBlobStore(rootDir: string): DiskBlobStore {
  const root = path.resolve(rootDir);
  const tmpDir = path.join(root, '.tmp');
  const pathOf = (key: string) => path.join(root, ...validateKey(key).split('/'));
  const newTempPath = async () => {
    await mkdir(tmpDir, { recursive: true });
    return path.join(tmpDir, `${randomBytes(12).toString('hex')}.part`);
  };

  /** Directories this store made or found: a put into one skips the mkdir (a project's files share one). */
  const knownDirs = new Set<string>();

  // The metadata calls of a put (open, stat, mkdir, link, rename, unlink, close) are made
  // synchronously: each takes microseconds on a local disk, while through libuv's thread pool
  // each costs a trip there and back (about 100 µs on this VM, several per put) and queues behind
  // sharp's and other fsyncs. Only the fsyncs, which wait for the disk, go to the pool.

  /**
   * Makes `dir` unless this store made or found it before. Returns the directories whose entries a
   * put into `dir` changes, to fsync after it (`dir`, and the parents made with it), and whether
   * `dir` was just made (a known one may have been removed meanwhile: ENOENT, make it again).
   */
  function ensureDir(dir: string): { dirs: string[]; made: boolean } {
    if (knownDirs.has(dir)) return { dirs: [dir], made: false };
    const firstCreated = mkdirSync(dir, { recursive: true });
    knownDirs.add(dir);
    const dirs = [dir];
    if (firstCreated)
      for (let d = dir; d !== path.dirname(firstCreated) && d !== root;) dirs.push((d = path.dirname(d)));
    return { dirs, made: true };
  }

  /** Runs `put` into `dest`'s directory, made again once if it was removed since this store saw it. */
  function intoDir<T>(dest: string, put: () => T): { result: T; dirs: string[] } {
    const dir = path.dirname(dest);
    const first = ensureDir(dir);
    try {
      return { result: put(), dirs: first.dirs };
    } catch (err) {
      if (errCode(err) !== 'ENOENT' || first.made) throw err;
      knownDirs.delete(dir);
      const again = ensureDir(dir);
      return { result: put(), dirs: again.dirs };
    }
  }

  /**
   * Puts `from` at `dest` in order: the file's data fsynced (through `fd`; null when the caller
   * has), renamed, then the directory entries fsynced, so an existing blob at `dest` is only ever
   * replaced by a complete one, even across a crash.
   */
  async function publish(from: string, dest: string, fd: number | null): Promise<void> {
    if (fd !== null) await fsyncFd(fd);
    const { dirs } = intoDir(dest, () => renameSync(from, dest));
    for (const d of dirs) await fsyncDir(d);
  }

  /**
   * A new blob (nothing at `dest`): linked into place first, then the file's data and the
   * directory entries fsynced at once, which costs one disk flush instead of two in a row (the
   * store phase of every task). Until both are done a crash may leave `dest` incomplete, but
   * nothing names it yet: callers announce their puts (the blob journal) and commit the row that
   * points at a blob only after the put returns, so the start-up sweep removes it. false: `dest`
   * exists (or this filesystem has no hard links), for publish() to replace it in order.
   */
  async function publishNew(from: string, dest: string, fd: number): Promise<boolean> {
    const linked = intoDir(dest, () => {
      try {
        linkSync(from, dest);
        return true;
      } catch (err) {
        const code = errCode(err);
        if (code === 'EEXIST' || code === 'EPERM' || code === 'ENOTSUP' || code === 'EMLINK') return false;
        throw err;
      }
    });
    if (!linked.result) return false;
    unlinkSync(from);
    const synced = await Promise.allSettled([fsyncFd(fd), ...linked.dirs.map(fsyncDir)]);
    const failed = synced.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    return true;
  }

  return {
    root,

    async putFile(key, localPath) {
      const dest = pathOf(key);
      const src = path.resolve(localPath);
      const fd = openSync(src, 'r');
      try {
        const st = fstatSync(fd);
        if (!st.isFile()) throw new Error(`putFile: ${src} is not a regular file`);
        try {
          if (!(await publishNew(src, dest, fd))) await publish(src, dest, fd);
          return { size: st.size, modified: st.mtime };
        } catch (err) {
          if (errCode(err) !== 'EXDEV') throw keyConflict(err);
        }
      } finally {
        closeSync(fd);
      }
      // Another filesystem: copy next to the store, fsync, then rename so the swap stays atomic.
      const tmp = await newTempPath();
      try {
        await copyFile(src, tmp);
        const copied = await syncFile(tmp, 'r+');
        await publish(tmp, dest, null);
        await rm(src, { force: true });
        return { size: copied.size, modified: copied.mtime };
      } catch (err) {
        await rm(tmp, { force: true });
        throw keyConflict(err);
      }
    },

    async putStream(key, body, opts = {}) {
      const dest = pathOf(key);
      const maxBytes = opts.maxBytes ?? Infinity;
      if (!(maxBytes >= 0)) throw new RangeError('maxBytes must be >= 0');
      const tmp = await newTempPath();
      // flush: fsync before close, so the renamed blob is on disk, not just in the page cache.
      const out = createWriteStream(tmp, { flags: 'wx', flush: true, highWaterMark: IO_CHUNK });
      try {
        await pipeline(body, byteLimit(maxBytes), out);
        const st = await stat(tmp);
        await publish(tmp, dest, null);
        return { size: st.size, modified: st.mtime };
      } catch (err) {
        // A source that fails early rejects the pipeline while the file's open() is still pending; wait
        // for the stream to close, or the open would create the temp file after it was removed.
        if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
        await rm(tmp, { force: true });
        throw keyConflict(err);
      }
    },

    async stat(key) {
      const st = await stat(pathOf(key)).catch(ignoreMissing);
      return st?.isFile() ? { size: st.size, modified: st.mtime } : null;
    },

    async read(key, range) {
      // One open file handle for stat and stream: a concurrent overwrite (rename) cannot mix two blobs.
      const fh = await open(pathOf(key), 'r').catch(ignoreMissing);
      if (!fh) throw notFound();
      try {
        const st = await fh.stat();
        if (!st.isFile()) throw notFound();
        const bounds = range ? clampRange(range, st.size) : {};
        // Chunks of 1 MiB, or of the blob's size when smaller (a thumbnail need not allocate a MiB).
        const chunk = Math.min(IO_CHUNK, Math.max(16 * 1024, st.size));
        return fh.createReadStream({ ...bounds, highWaterMark: chunk });
      } catch (err) {
        await fh.close();
        throw err;
      }
    },

    localPath: (key) => pathOf(key),

    async delete(key) {
      await unlink(pathOf(key)).catch((err: unknown) => {
        if (errCode(err) !== 'EISDIR') ignoreMissing(err); // a "directory" key holds no blob
      });
    },

    async *list(prefix) {
      validatePrefix(prefix);
      const slash = prefix.lastIndexOf('/');
      yield* walk(slash < 0 ? '' : prefix.slice(0, slash));

      async function* walk(dirKey: string): AsyncGenerator<string> {
        const entries = await readdir(path.join(root, ...dirKey.split('/')), { withFileTypes: true }).catch(
          ignoreMissing,
        );
        for (const entry of entries ?? []) {
          const key = dirKey ? `${dirKey}/${entry.name}` : entry.name;
          if (!isValidKey(key)) continue; // skips .tmp and anything not written by this store
          if (entry.isDirectory() && (key.startsWith(prefix) || prefix.startsWith(`${key}/`))) yield* walk(key);
          else if (entry.isFile() && key.startsWith(prefix)) yield key;
        }
      }
    },

    async checkWritable() {
      try {
        const probe = await newTempPath();
        const fh = await open(probe, 'wx');
        try {
          await fh.writeFile('ok');
          await fh.sync();
        } finally {
          await fh.close();
          await rm(probe, { force: true });
        }
      } catch (err) {
        throw new AppError('service_unavailable', 'Blob storage is not writable', { cause: err });
      }
    },

    async sweepTemp(olderThanMs) {
      // In-flight writes keep touching their temp file, so only abandoned ones get old.
      const cutoff = Date.now() - olderThanMs;
      let removed = 0;
      for (const name of (await readdir(tmpDir).catch(ignoreMissing)) ?? []) {
        const file = path.join(tmpDir, name);
        const st = await lstat(file).catch(ignoreMissing);
        if (st && st.mtimeMs < cutoff) {
          await rm(file, { force: true, recursive: true });
          removed++;
        }
      }
      return removed;
    },
  };
}

function byteLimit(maxBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer | string, _enc, done) {
      seen += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
      if (seen > maxBytes) done(new AppError('payload_too_large', `Body exceeds the limit of ${maxBytes} bytes`));
      else done(null, chunk);
    },
  });
}

function clampRange(range: ByteRange, size: number): { start: number; end: number } {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new AppError('bad_request', 'Invalid byte range');
  }
  if (start >= size) throw new AppError('bad_request', 'Byte range starts past the end of the blob');
  return { start, end: Math.min(end, size - 1) };
}

function keyConflict(err: unknown): unknown {
  const code = errCode(err);
  // ENOTDIR: a parent segment is a blob; EISDIR/EEXIST/ENOTEMPTY: the key is a "directory" of other keys.
  if (code === 'ENOTDIR' || code === 'EISDIR' || code === 'EEXIST' || code === 'ENOTEMPTY') {
    return new AppError('conflict', 'Blob key collides with an existing key', { cause: err });
  }
  return err;
}

const notFound = () => new AppError('not_found', 'Blob not found');
