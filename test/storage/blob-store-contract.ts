import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import type { BlobStore } from '../../src/storage/blob-store.js';
import { fileBlobKey } from '../../src/storage/keys.js';

export interface StoreFixture {
  store: BlobStore;
  cleanup(): Promise<void>;
}

/** Behaviour every BlobStore must have (disk now, S3 later). Each test gets a fresh, empty store. */
export function runBlobStoreContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`BlobStore contract: ${name}`, () => {
    let fx: StoreFixture;
    let store: BlobStore;
    let scratch: string;
    beforeEach(async () => {
      fx = await makeStore();
      store = fx.store;
      scratch = await mkdtemp(path.join(tmpdir(), 'blob-contract-'));
    });
    afterEach(async () => {
      await fx.cleanup();
      await rm(scratch, { recursive: true, force: true });
    });

    it('putStream then stat and read the whole blob', async () => {
      const data = randomBytes(100_000);
      const before = Date.now();
      const put = await store.putStream('a/b/c', Readable.from(chunks(data, 4096)));
      assert.equal(put.size, data.length);
      const st = await store.stat('a/b/c');
      assert.equal(st?.size, data.length);
      assert.ok(st.modified instanceof Date);
      assert.ok(Math.abs(st.modified.getTime() - before) < 60_000, 'modified is about now');
      assert.deepEqual(await readAll(await store.read('a/b/c')), data);
    });

    it('putFile stores a local file and takes ownership of it', async () => {
      const data = randomBytes(10_000);
      const src = path.join(scratch, 'upload.bin');
      await writeFile(src, data);
      const key = fileBlobKey('prj_abc', 'file_def');
      const put = await store.putFile(key, src, { contentType: 'application/octet-stream' });
      assert.equal(put.size, data.length);
      assert.deepEqual(await readAll(await store.read(key)), data);
      await assert.rejects(stat(src), { code: 'ENOENT' });
    });

    it('stores and reads an empty blob', async () => {
      assert.equal((await store.putStream('empty', Readable.from([]))).size, 0);
      assert.equal((await store.stat('empty'))?.size, 0);
      assert.equal((await readAll(await store.read('empty'))).length, 0);
    });

    it('reads inclusive byte ranges: first byte, last byte, middle, end clamped', async () => {
      const data = randomBytes(1000);
      await store.putStream('r', Readable.from([data]));
      const range = async (start: number, end: number) => readAll(await store.read('r', { start, end }));
      assert.deepEqual(await range(0, 0), data.subarray(0, 1));
      assert.deepEqual(await range(999, 999), data.subarray(999));
      assert.deepEqual(await range(10, 19), data.subarray(10, 20));
      assert.deepEqual(await range(0, 999), data);
      assert.deepEqual(await range(990, 5000), data.subarray(990));
      await assertAppError(store.read('r', { start: 1000, end: 1000 }), 'bad_request');
      await assertAppError(store.read('r', { start: 5, end: 4 }), 'bad_request');
      await assertAppError(store.read('r', { start: -1, end: 4 }), 'bad_request');
    });

    it('missing key: read is not_found, stat is null', async () => {
      await assertAppError(store.read('nope/nothing'), 'not_found');
      await assertAppError(store.read('nope/nothing', { start: 0, end: 0 }), 'not_found');
      assert.equal(await store.stat('nope/nothing'), null);
    });

    it('a key prefix is not itself a blob', async () => {
      await store.putStream('dir/leaf', Readable.from([Buffer.from('x')]));
      assert.equal(await store.stat('dir'), null);
      await assertAppError(store.read('dir'), 'not_found');
      await store.delete('dir');
      assert.equal((await store.stat('dir/leaf'))?.size, 1);
    });

    it('delete is idempotent', async () => {
      await store.putStream('d/x', Readable.from([Buffer.from('hello')]));
      await store.delete('d/x');
      assert.equal(await store.stat('d/x'), null);
      await store.delete('d/x');
      await store.delete('never/existed');
      await assertAppError(store.read('d/x'), 'not_found');
    });

    it('overwrites an existing key', async () => {
      await store.putStream('o', Readable.from([Buffer.from('first version')]));
      await store.putStream('o', Readable.from([Buffer.from('v2')]));
      assert.equal((await store.stat('o'))?.size, 2);
      assert.equal((await readAll(await store.read('o'))).toString(), 'v2');
      const src = path.join(scratch, 'v3');
      await writeFile(src, 'version three');
      await store.putFile('o', src);
      assert.equal((await readAll(await store.read('o'))).toString(), 'version three');
    });

    it('concurrent writes to one key leave one complete version', async () => {
      const a = Buffer.alloc(300_000, 'a');
      const b = Buffer.alloc(200_000, 'b');
      await Promise.all([
        store.putStream('race', Readable.from(chunks(a, 8192))),
        store.putStream('race', Readable.from(chunks(b, 8192))),
      ]);
      const got = await readAll(await store.read('race'));
      assert.ok(got.equals(a) || got.equals(b), 'got exactly one of the two writes');
    });

    it('lists keys by plain string prefix', async () => {
      const keys = ['projects/a/files/1', 'projects/a/files/2', 'projects/ab/files/3', 'other/x', 'top'];
      for (const key of keys) await store.putStream(key, Readable.from([Buffer.from(key)]));
      assert.deepEqual(await listAll(store, 'projects/a/'), ['projects/a/files/1', 'projects/a/files/2']);
      assert.deepEqual(await listAll(store, 'projects/a'), [
        'projects/a/files/1',
        'projects/a/files/2',
        'projects/ab/files/3',
      ]);
      assert.deepEqual(await listAll(store, 'projects/a/files/1'), ['projects/a/files/1']);
      assert.deepEqual(await listAll(store, ''), [...keys].sort());
      assert.deepEqual(await listAll(store, 'nothing/'), []);
      await store.delete('projects/a/files/1');
      assert.deepEqual(await listAll(store, 'projects/a/'), ['projects/a/files/2']);
    });

    it('a stream that fails mid-way leaves no blob, no visible temp, and the old blob intact', async () => {
      await store.putStream('keep', Readable.from([Buffer.from('old')]));
      for (const key of ['fresh', 'keep']) {
        await assert.rejects(store.putStream(key, failingStream(200_000)), /boom/);
      }
      assert.equal(await store.stat('fresh'), null);
      assert.equal((await readAll(await store.read('keep'))).toString(), 'old');
      assert.deepEqual(await listAll(store, ''), ['keep']);
    });

    it('maxBytes: exceeding it is payload_too_large and stores nothing; exactly at it is fine', async () => {
      const data = randomBytes(50_000);
      await assertAppError(
        store.putStream('big', Readable.from(chunks(data, 1000)), { maxBytes: 49_999 }),
        'payload_too_large',
      );
      assert.equal(await store.stat('big'), null);
      assert.deepEqual(await listAll(store, ''), []);
      const put = await store.putStream('big', Readable.from(chunks(data, 1000)), { maxBytes: 50_000 });
      assert.equal(put.size, 50_000);
    });

    it('refuses keys that could escape or alias', async () => {
      const bad = ['../x', 'a/../b', 'a/./b', '..', '/abs', 'a\\b', 'a//b', 'a/', '', 'a\0b', '.tmp/x', 'a/.hidden'];
      const src = path.join(scratch, 'src');
      await writeFile(src, 'x');
      for (const key of bad) {
        await assertAppError(store.putStream(key, Readable.from([Buffer.from('x')])), 'bad_request', key);
        await assertAppError(store.putFile(key, src), 'bad_request', key);
        await assertAppError(store.stat(key), 'bad_request', key);
        await assertAppError(store.read(key), 'bad_request', key);
        await assertAppError(store.delete(key), 'bad_request', key);
      }
      await assertAppError(listAll(store, '../'), 'bad_request');
      assert.deepEqual(await listAll(store, ''), []);
      await stat(src); // refused puts leave the source alone
    });

    it('round-trips 8 MiB with equal hashes, including a range across chunk boundaries', async () => {
      const data = randomBytes(8 * 1024 * 1024);
      const put = await store.putStream('large', Readable.from(chunks(data, 64 * 1024)));
      assert.equal(put.size, data.length);
      assert.equal(sha256(await readAll(await store.read('large'))), sha256(data));
      const mib = 1024 * 1024;
      const slice = await readAll(await store.read('large', { start: mib - 7, end: 3 * mib + 7 }));
      assert.equal(sha256(slice), sha256(data.subarray(mib - 7, 3 * mib + 8)));
    });

    it('checkWritable succeeds on a healthy store and leaves no keys', async () => {
      await store.checkWritable();
      assert.deepEqual(await listAll(store, ''), []);
    });

    it('checkWritable run by many starting processes at once: all succeed, no keys left', async () => {
      await Promise.all(Array.from({ length: 24 }, () => store.checkWritable()));
      assert.deepEqual(await listAll(store, ''), []);
    });
  });
}

export function* chunks(data: Buffer, size: number): Generator<Buffer> {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
}

/** Emits `bytes` of data, then fails like a dropped client connection. */
export function failingStream(bytes: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= bytes) return this.destroy(new Error('boom: client went away'));
      sent += 16_384;
      this.push(Buffer.alloc(16_384, 1));
    },
  });
}

export async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(parts);
}

export async function listAll(store: BlobStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of store.list(prefix)) keys.push(key);
  return keys.sort();
}

async function assertAppError(p: Promise<unknown>, code: string, label = ''): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof AppError, `${label}: expected AppError, got ${String(err)}`);
    assert.equal(err.code, code, label);
    return true;
  });
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
