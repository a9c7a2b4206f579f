// Runs s3rver (an S3 protocol server) for the tests; started by s3.ts in its own process.
'use strict';
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { pipeline } = require('node:stream/promises');
const S3rver = require('s3rver');
const FilesystemStore = require('s3rver/lib/stores/filesystem');

// s3rver keeps objects as files in directories and removes a directory once a DELETE empties it.
// Its putObject races with that: a Buffer body is written without waiting and without an error
// listener, so when several processes put and delete objects under one prefix at once (mediad's
// start-up storage probe), the open can hit a just-removed directory and crash the whole server.
// Real S3 has no directories; this makes the emulator's write awaited and retried on that race.
FilesystemStore.prototype.putObject = async function putObject(object) {
  const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
  let file;
  for (let attempt = 0; !file; attempt++) {
    try {
      await fs.promises.mkdir(path.dirname(objectPath), { recursive: true });
      file = fs.createWriteStream(objectPath);
      await new Promise((resolve, reject) => file.once('open', resolve).once('error', reject));
    } catch (err) {
      file = undefined;
      if (err.code !== 'ENOENT' || attempt >= 10) throw err;
    }
  }
  const md5 = createHash('md5');
  let size = 0;
  const body = Buffer.isBuffer(object.content) ? [object.content] : object.content;
  await pipeline(
    body,
    async function* count(chunks) {
      for await (const chunk of chunks) {
        md5.update(chunk);
        size += chunk.length;
        yield chunk;
      }
    },
    file,
  );
  const digest = md5.digest('hex');
  await this.putMetadata(object.bucket, object.key, object.metadata, digest);
  return { size, md5: digest };
};

// The same directory clean-up, run by two DELETEs at once, can find its directory already gone.
const deleteObject = FilesystemStore.prototype.deleteObject;
FilesystemStore.prototype.deleteObject = async function (bucket, key) {
  try {
    await deleteObject.call(this, bucket, key);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err; // the object's files were unlinked before the clean-up
  }
};

const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory: process.env.S3RVER_DIR,
  configureBuckets: [{ name: process.env.S3RVER_BUCKET }],
});
server.run().then((address) => process.stdout.write(JSON.stringify({ port: address.port }) + '\n'));
process.stdin.on('end', () => process.exit(0)).resume(); // the test process went away: stop
