import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, describe, it } from 'node:test';
import { request } from 'undici';
import { AppError } from '../../src/errors.js';
import { createS3BlobStore, createS3Client } from '../../src/storage/s3-blob-store.js';
import { startS3 } from '../helpers/s3.js';
import { chunks, listAll, readAll, runBlobStoreContract } from './blob-store-contract.js';

const s3 = await startS3();
after(() => s3.close());

let n = 0;
const options = (prefix: string, bucket = s3.bucket) => ({
  bucket,
  prefix,
  endpoint: s3.endpoint,
  region: 'us-east-1',
  forcePathStyle: true,
});
// A fresh prefix per test is a fresh, empty store on the one server.
const freshPrefix = () => `contract-${process.pid}-${++n}`;

runBlobStoreContract('s3', async () => ({
  store: createS3BlobStore({ ...options(freshPrefix()), client: s3.client }),
  cleanup: async () => {},
}));

/** A store whose client records the name of every command it sends. */
function spiedStore(prefix: string, extra: { listPageSize?: number } = {}) {
  const client = createS3Client(options(prefix));
  const commands: string[] = [];
  const partSizes: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let partBytesDone = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      commands.push(context.commandName ?? '?');
      const body = (args.input as { Body?: unknown }).Body;
      if (context.commandName !== 'UploadPartCommand' || !(body instanceof Uint8Array)) return next(args);
      partSizes.push(body.byteLength);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      try {
        return await next(args);
      } finally {
        inFlight--;
        partBytesDone += body.byteLength;
      }
    },
    { step: 'initialize', name: 'testSpy' },
  );
  return {
    store: createS3BlobStore({ ...options(prefix), ...extra, client }),
    commands,
    partSizes,
    maxPartsInFlight: () => maxInFlight,
    partBytesDone: () => partBytesDone,
    close: () => client.destroy(),
  };
}

const count = (list: string[], name: string) => list.filter((c) => c === name).length;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const isAppError = (code: string) => (e: unknown) => e instanceof AppError && e.code === code;

describe('S3 blob store specifics', () => {
  it('a 40 MiB putFile goes up as a multipart upload of 8 MiB parts, and the local file is removed', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 's3-put-'));
    const spy = spiedStore(freshPrefix());
    try {
      const src = path.join(dir, 'big.bin');
      const data = randomBytes(40 * 1024 * 1024);
      await pipeline(Readable.from(chunks(data, 1024 * 1024)), createWriteStream(src));
      const put = await spy.store.putFile('big', src, { contentType: 'application/octet-stream' });
      assert.equal(put.size, data.length);
      await assert.rejects(stat(src), { code: 'ENOENT' });
      assert.equal(count(spy.commands, 'CreateMultipartUploadCommand'), 1);
      assert.deepEqual(spy.partSizes, Array(5).fill(8 * 1024 * 1024));
      assert.equal(count(spy.commands, 'CompleteMultipartUploadCommand'), 1);
      assert.equal(count(spy.commands, 'PutObjectCommand'), 0);
      assert.equal(sha256(await readAll(await spy.store.read('big'))), sha256(data));
      assert.equal((await spy.store.stat('big'))?.size, data.length);
    } finally {
      spy.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('memory stays bounded: the source is read only as fast as parts go up', async () => {
    // Measured by the bytes read from the source but not yet sent as parts (what the store holds),
    // not by process memory, which depends on when the GC runs.
    const spy = spiedStore(freshPrefix());
    const mib = 1024 * 1024;
    const hash = createHash('sha256');
    let generated = 0;
    let maxAhead = 0;
    async function* generate() {
      for (let i = 0; i < 96; i++) {
        const chunk = Buffer.alloc(mib, i);
        hash.update(chunk);
        generated += chunk.length;
        maxAhead = Math.max(maxAhead, generated - spy.partBytesDone());
        yield chunk;
      }
    }
    try {
      const put = await spy.store.putStream(
        'stream',
        Readable.from(generate(), { objectMode: false, highWaterMark: mib }),
      );
      assert.equal(put.size, 96 * mib);
      assert.ok(spy.maxPartsInFlight() <= 3, `${spy.maxPartsInFlight()} parts in flight`);
      // Three 8 MiB parts in flight plus the few MiB being gathered (27 MiB here), however long the stream.
      assert.ok(maxAhead <= 40 * mib, `up to ${(maxAhead / mib).toFixed(1)} MiB read ahead of the parts sent`);
      const back = createHash('sha256');
      for await (const chunk of await spy.store.read('stream')) back.update(chunk as Buffer);
      assert.equal(back.digest('hex'), hash.digest('hex'));
    } finally {
      spy.close();
    }
  });

  it('a multipart putStream over maxBytes aborts the upload and leaves nothing', async () => {
    const spy = spiedStore(freshPrefix());
    try {
      const body = Readable.from(chunks(randomBytes(20 * 1024 * 1024), 256 * 1024));
      await assert.rejects(
        spy.store.putStream('over', body, { maxBytes: 17 * 1024 * 1024 }),
        isAppError('payload_too_large'),
      );
      assert.ok(count(spy.commands, 'UploadPartCommand') >= 1, 'parts were sent before the limit was hit');
      assert.equal(count(spy.commands, 'AbortMultipartUploadCommand'), 1);
      assert.equal(count(spy.commands, 'CompleteMultipartUploadCommand'), 0);
      assert.ok(body.destroyed, 'the rest of the body is not read');
      assert.equal(await spy.store.stat('over'), null);
      assert.deepEqual(await listAll(spy.store, ''), []);
    } finally {
      spy.close();
    }
  });

  it('keys live under the prefix, or at the root of the bucket without one; the probe leaves nothing', async () => {
    const prefix = freshPrefix();
    const store = createS3BlobStore({ ...options(`/${prefix}/`), client: s3.client });
    await store.putStream('projects/p/files/f', Readable.from([Buffer.from('x')]));
    await store.checkWritable();
    assert.deepEqual(await s3.keys(`${prefix}/`), [`${prefix}/projects/p/files/f`]);

    await s3.createBucket('mediad-root');
    const rootStore = createS3BlobStore({ ...options('', 'mediad-root'), client: s3.client });
    await rootStore.putStream('a/b', Readable.from([Buffer.from('y')]));
    await rootStore.checkWritable();
    assert.deepEqual(await s3.keys('', 'mediad-root'), ['a/b']);
    assert.deepEqual(await listAll(rootStore, ''), ['a/b']);
    assert.equal(rootStore.localPath('a/b'), null);
  });

  it('list follows continuation tokens across pages', async () => {
    const spy = spiedStore(freshPrefix(), { listPageSize: 2 });
    try {
      const keys = ['m/1', 'm/2', 'm/3', 'm/4', 'm/5', 'n/1'];
      for (const k of keys) await spy.store.putStream(k, Readable.from([Buffer.from('z')]));
      assert.deepEqual(await listAll(spy.store, 'm/'), keys.slice(0, 5));
      assert.equal(count(spy.commands, 'ListObjectsV2Command'), 3);
    } finally {
      spy.close();
    }
  });

  it('presignGet gives a URL that serves the blob (and ranges of it) with the given headers', async () => {
    const store = createS3BlobStore({ ...options(freshPrefix()), client: s3.client });
    const data = randomBytes(5000);
    await store.putStream('p/blob', Readable.from([data]), { contentType: 'application/octet-stream' });
    const url = await store.presignGet('p/blob', {
      expiresSeconds: 60,
      contentType: 'image/png',
      contentDisposition: 'inline; filename="x.png"',
    });
    assert.ok(url.startsWith(`${s3.endpoint}/`), url);
    const full = await request(url);
    assert.equal(full.statusCode, 200);
    assert.equal(full.headers['content-type'], 'image/png');
    assert.equal(full.headers['content-disposition'], 'inline; filename="x.png"');
    assert.ok(Buffer.from(await full.body.arrayBuffer()).equals(data));
    const part = await request(url, { headers: { range: 'bytes=100-199' } });
    assert.equal(part.statusCode, 206);
    assert.ok(Buffer.from(await part.body.arrayBuffer()).equals(data.subarray(100, 200)));
  });

  it('checkWritable fails with service_unavailable when the bucket does not exist', async () => {
    const store = createS3BlobStore({ ...options('x', 'no-such-bucket'), client: s3.client });
    await assert.rejects(store.checkWritable(), isAppError('service_unavailable'));
  });
});
