import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import { createDiskBlobStore } from '../../src/storage/disk-blob-store.js';
import { fileBlobKey } from '../../src/storage/keys.js';
import { failingStream, listAll, readAll, runBlobStoreContract } from './blob-store-contract.js';

runBlobStoreContract('disk', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'disk-blobs-'));
  return { store: createDiskBlobStore(dir), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

async function withStore(fn: (root: string) => Promise<void>): Promise<void> {
  const root = await mkdtemp(path.join(tmpdir(), 'disk-blobs-'));
  try {
    await fn(root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

const tempEntries = async (root: string) => readdir(path.join(root, '.tmp')).catch(() => []);

describe('disk blob store specifics', () => {
  it('localPath maps keys under the root, and the file holds the blob', () =>
    withStore(async (root) => {
      const store = createDiskBlobStore(root);
      const key = fileBlobKey('prj_1', 'file_2');
      assert.equal(store.localPath(key), path.join(root, 'projects', 'prj_1', 'files', 'file_2'));
      await store.putStream(key, Readable.from([Buffer.from('bytes')]));
      assert.equal(await readFile(store.localPath(key)!, 'utf8'), 'bytes');
      assert.throws(
        () => store.localPath('../etc/passwd'),
        (err: unknown) => err instanceof AppError && err.code === 'bad_request',
      );
    }));

  it('putFile on the same filesystem renames (same inode, no copy)', () =>
    withStore(async (root) => {
      const store = createDiskBlobStore(root);
      const src = path.join(root, 'incoming.bin');
      await writeFile(src, 'payload');
      const { ino } = await stat(src);
      await store.putFile('k', src);
      assert.equal((await stat(store.localPath('k')!)).ino, ino);
      await assert.rejects(stat(src), { code: 'ENOENT' });
    }));

  it('putFile of a new key links it in and leaves one link; of an existing key replaces it whole', () =>
    withStore(async (root) => {
      const store = createDiskBlobStore(root);
      const first = path.join(root, 'first.bin');
      await writeFile(first, 'first');
      await store.putFile('a/b/new', first);
      const st = await stat(store.localPath('a/b/new')!);
      assert.equal(st.nlink, 1, 'the source link is gone');
      await assert.rejects(stat(first), { code: 'ENOENT' });
      // Two puts of one new key at once: one links, the other finds it there and replaces it in order.
      const x = path.join(root, 'x.bin');
      const y = path.join(root, 'y.bin');
      await writeFile(x, Buffer.alloc(100_000, 'x'));
      await writeFile(y, Buffer.alloc(50_000, 'y'));
      await Promise.all([store.putFile('a/b/race', x), store.putFile('a/b/race', y)]);
      const got = await readFile(store.localPath('a/b/race')!);
      assert.ok(got.equals(Buffer.alloc(100_000, 'x')) || got.equals(Buffer.alloc(50_000, 'y')));
      assert.equal((await stat(store.localPath('a/b/race')!)).nlink, 1);
      await assert.rejects(stat(x), { code: 'ENOENT' });
      await assert.rejects(stat(y), { code: 'ENOENT' });
      // The directory removed behind the store's back is made again.
      await rm(path.join(root, 'a'), { recursive: true });
      await writeFile(first, 'again');
      await store.putFile('a/b/new', first);
      assert.equal(await readFile(store.localPath('a/b/new')!, 'utf8'), 'again');
    }));

  it('putFile from another filesystem copies, then removes the source', async (t) => {
    const other = '/dev/shm';
    const otherDev = await stat(other).then(
      (s) => s.dev,
      () => null,
    );
    if (otherDev === null || otherDev === (await stat(tmpdir())).dev) return t.skip('no second filesystem');
    await withStore(async (root) => {
      const store = createDiskBlobStore(root);
      const src = path.join(other, `mediad-test-${process.pid}-${Date.now()}`);
      await writeFile(src, 'across devices');
      try {
        await store.putFile('x/y', src);
        assert.equal(await readFile(store.localPath('x/y')!, 'utf8'), 'across devices');
        await assert.rejects(stat(src), { code: 'ENOENT' });
        assert.deepEqual(await tempEntries(root), []);
      } finally {
        await rm(src, { force: true });
      }
    });
  });

  it('putFile refuses a directory and leaves it alone', () =>
    withStore(async (root) => {
      const store = createDiskBlobStore(root);
      const dir = path.join(root, 'somedir');
      await mkdir(dir);
      await assert.rejects(store.putFile('k', dir), /not a regular file/);
      assert.ok((await stat(dir)).isDirectory());
    }));

  it('failed writes leave nothing in .tmp', () =>
    withStore(async (root) => {
      const store = createDiskBlobStore(root);
      await assert.rejects(store.putStream('a', failingStream(100_000)), /boom/);
      await assert.rejects(
        store.putStream('b', Readable.from([Buffer.alloc(10)]), { maxBytes: 5 }),
        (e: unknown) => e instanceof AppError && e.code === 'payload_too_large',
      );
      await store.checkWritable();
      assert.deepEqual(await tempEntries(root), []);
    }));

  it('a key under an existing blob is a conflict, not a crash', () =>
    withStore(async (root) => {
      const store = createDiskBlobStore(root);
      await store.putStream('a/b', Readable.from([Buffer.from('x')]));
      await assert.rejects(
        store.putStream('a/b/c', Readable.from([Buffer.from('y')])),
        (e: unknown) => e instanceof AppError && e.code === 'conflict',
      );
      await assert.rejects(
        store.putStream('a', Readable.from([Buffer.from('y')])),
        (e: unknown) => e instanceof AppError && e.code === 'conflict',
      );
      assert.deepEqual(await listAll(store, ''), ['a/b']);
      assert.deepEqual(await tempEntries(root), []);
    }));

  it('sweepTemp removes old leftovers only, and list never shows temp files', () =>
    withStore(async (root) => {
      const store = createDiskBlobStore(root);
      await mkdir(path.join(root, '.tmp'), { recursive: true });
      const old = path.join(root, '.tmp', 'crashed.part');
      const fresh = path.join(root, '.tmp', 'in-flight.part');
      await writeFile(old, 'partial');
      await writeFile(fresh, 'partial');
      const hourAgo = new Date(Date.now() - 3600_000);
      await utimes(old, hourAgo, hourAgo);
      assert.deepEqual(await listAll(store, ''), []);
      assert.equal(await store.sweepTemp(10 * 60_000), 1);
      assert.deepEqual(await tempEntries(root), ['in-flight.part']);
      assert.equal(await createDiskBlobStore(path.join(root, 'missing')).sweepTemp(0), 0);
    }));

  it('read keeps serving the version it opened while the key is overwritten', () =>
    withStore(async (root) => {
      const store = createDiskBlobStore(root);
      await store.putStream('v', Readable.from([Buffer.alloc(3 * 1024 * 1024, 'a')]));
      const reading = await store.read('v');
      await store.putStream('v', Readable.from([Buffer.alloc(10, 'b')]));
      const got = await readAll(reading);
      assert.equal(got.length, 3 * 1024 * 1024);
      assert.ok(got.every((c) => c === 0x61));
    }));

  it('checkWritable fails with service_unavailable when the root cannot be created', async () => {
    await withStore(async (root) => {
      const file = path.join(root, 'a-file');
      await writeFile(file, '');
      const store = createDiskBlobStore(path.join(file, 'store'));
      await assert.rejects(
        store.checkWritable(),
        (e: unknown) => e instanceof AppError && e.code === 'service_unavailable',
      );
    });
  });
});
