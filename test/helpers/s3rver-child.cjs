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
// It also writes the body into the object's own file, so two PUTs of one key at once interleave
// their bytes, where S3 keeps one whole version. Real S3 has no directories and replaces an
// object whole: this writes the body to a file of its own (retried on that race), then renames it
// into place and writes its metadata, one PUT of a key at a time.
const commits = new Map();
FilesystemStore.prototype.putObject = async function putObject(object) {
  const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
  // Not listed: s3rver lists only the files that end with its object suffix.
  const partPath = `${objectPath}.part-${process.pid}-${Math.random().toString(36).slice(2)}`;
  let file;
  for (let attempt = 0; !file; attempt++) {
    try {
      await fs.promises.mkdir(path.dirname(objectPath), { recursive: true });
      file = fs.createWriteStream(partPath);
      await new Promise((resolve, reject) => file.once('open', resolve).once('error', reject));
    } catch (err) {
      file = undefined;
      if (err.code !== 'ENOENT' || attempt >= 10) throw err;
    }
  }
  const md5 = createHash('md5');
  let size = 0;
  const body = Buffer.isBuffer(object.content) ? [object.content] : object.content;
  try {
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
  } catch (err) {
    await fs.promises.rm(partPath, { force: true });
    throw err;
  }
  const digest = md5.digest('hex');
  const commit = (commits.get(objectPath) ?? Promise.resolve()).then(async () => {
    await fs.promises.rename(partPath, objectPath);
    await this.putMetadata(object.bucket, object.key, object.metadata, digest);
  });
  const settled = commit.catch(() => undefined);
  commits.set(objectPath, settled);
  try {
    await commit;
  } finally {
    if (commits.get(objectPath) === settled) commits.delete(objectPath);
  }
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

// Multipart operations s3rver lacks, which @tus/s3-store (tus uploads on S3) calls: ListParts
// (GET /bucket/key?uploadId=, on every tus HEAD and PATCH: s3rver answers 405), AbortMultipartUpload
// (DELETE /bucket/key?uploadId=: 405) and ListMultipartUploads (GET /bucket?uploads: 501). No real
// S3 server that implements them installs here (npm's S3 emulators -- s3rver, its forks, fauxqs,
// smarts3 -- lack ListParts; Debian's radosgw needs a Ceph cluster), so they are answered here
// over s3rver's own stored parts (<bucket>/._S3rver_uploads/<uploadId>/{key,metadata,N,N.md5}),
// in S3's XML wire format (docs.aws.amazon.com/AmazonS3/latest/API/API_ListParts.html,
// API_ListMultipartUploads.html, API_AbortMultipartUpload.html), so the library runs unchanged.
// Requests are not signature-checked here (s3rver's own routes are).
const xmlEscape = (s) =>
  String(s).replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]);
const xml = (name, body) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<${name} xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${body}</${name}>`;
const tag = (name, value) => `<${name}>${xmlEscape(value)}</${name}>`;
function s3Error(ctx, status, code, message) {
  ctx.status = status;
  ctx.type = 'application/xml';
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error>${tag('Code', code)}${tag('Message', message)}${tag('RequestId', '0')}</Error>`;
}

function multipartOperations(store) {
  const uploadsDir = (bucket) => store.getResourcePath(bucket, undefined, 'uploads');
  async function readUpload(bucket, uploadId) {
    if (!/^[0-9a-f]+$/.test(uploadId)) return null;
    const dir = path.join(uploadsDir(bucket), uploadId);
    try {
      const [key, st] = await Promise.all([
        fs.promises.readFile(path.join(dir, 'key'), 'utf8'),
        fs.promises.stat(path.join(dir, 'key')),
      ]);
      return { dir, key, initiated: st.mtime };
    } catch (err) {
      if (err.code === 'ENOENT') return null;
      throw err;
    }
  }
  return async function multipart(ctx, next) {
    const m = /^\/([^/]+)(?:\/(.*))?$/.exec(ctx.path);
    if (!m) return next();
    const bucket = m[1];
    const key = m[2] ? decodeURIComponent(m[2]) : undefined;
    const q = ctx.query;
    if (ctx.method === 'GET' && key !== undefined && typeof q.uploadId === 'string' && q.partNumber === undefined) {
      const upload = await readUpload(bucket, q.uploadId);
      if (!upload || upload.key !== key)
        return s3Error(ctx, 404, 'NoSuchUpload', 'The specified upload does not exist.');
      const marker = Number(q['part-number-marker'] ?? 0);
      const max = Math.min(Number(q['max-parts'] ?? 1000), 1000);
      const numbers = (await fs.promises.readdir(upload.dir))
        .filter((n) => /^\d+$/.test(n))
        .map(Number)
        .filter((n) => n > marker)
        .sort((a, b) => a - b);
      const page = numbers.slice(0, max);
      const parts = [];
      for (const n of page) {
        const file = path.join(upload.dir, String(n));
        const [st, md5] = await Promise.all([
          fs.promises.stat(file),
          fs.promises.readFile(`${file}.md5`, 'utf8').catch(() => null),
        ]);
        if (md5 === null) continue; // still being written: S3 lists a part once its upload completed
        parts.push(
          `<Part>${tag('PartNumber', n)}${tag('LastModified', st.mtime.toISOString())}${tag('ETag', `"${md5}"`)}${tag('Size', st.size)}</Part>`,
        );
      }
      const truncated = numbers.length > page.length;
      ctx.status = 200;
      ctx.type = 'application/xml';
      ctx.body = xml(
        'ListPartsResult',
        tag('Bucket', bucket) +
          tag('Key', key) +
          tag('UploadId', q.uploadId) +
          tag('PartNumberMarker', marker) +
          (page.length ? tag('NextPartNumberMarker', page[page.length - 1]) : '') +
          tag('MaxParts', max) +
          tag('IsTruncated', truncated) +
          tag('StorageClass', 'STANDARD') +
          parts.join(''),
      );
      return;
    }
    if (ctx.method === 'DELETE' && key !== undefined && typeof q.uploadId === 'string') {
      const upload = await readUpload(bucket, q.uploadId);
      if (!upload || upload.key !== key)
        return s3Error(ctx, 404, 'NoSuchUpload', 'The specified upload does not exist.');
      await fs.promises.rm(upload.dir, { recursive: true, force: true });
      ctx.status = 204;
      return;
    }
    if (ctx.method === 'GET' && key === undefined && 'uploads' in q) {
      const prefix = typeof q.prefix === 'string' ? q.prefix : '';
      const keyMarker = typeof q['key-marker'] === 'string' ? q['key-marker'] : '';
      const idMarker = typeof q['upload-id-marker'] === 'string' ? q['upload-id-marker'] : '';
      const max = Math.min(Number(q['max-uploads'] ?? 1000), 1000);
      const ids = await fs.promises.readdir(uploadsDir(bucket)).catch(() => []);
      const all = [];
      for (const id of ids) {
        const upload = await readUpload(bucket, id);
        if (upload && upload.key.startsWith(prefix)) all.push({ id, ...upload });
      }
      // S3 orders by key, then by initiation; past the markers only.
      all.sort((a, b) =>
        a.key < b.key ? -1 : a.key > b.key ? 1 : a.initiated - b.initiated || (a.id < b.id ? -1 : 1),
      );
      const after = all.filter((u) => u.key > keyMarker || (u.key === keyMarker && idMarker !== '' && u.id > idMarker));
      const page = after.slice(0, max);
      const truncated = after.length > page.length;
      const last = page[page.length - 1];
      const owner = `<Owner>${tag('ID', '123456789000')}${tag('DisplayName', 'S3rver')}</Owner>`;
      ctx.status = 200;
      ctx.type = 'application/xml';
      ctx.body = xml(
        'ListMultipartUploadsResult',
        tag('Bucket', bucket) +
          tag('KeyMarker', keyMarker) +
          tag('UploadIdMarker', idMarker) +
          (truncated && last ? tag('NextKeyMarker', last.key) + tag('NextUploadIdMarker', last.id) : '') +
          tag('Prefix', prefix) +
          tag('MaxUploads', max) +
          tag('IsTruncated', truncated) +
          page
            .map(
              (u) =>
                `<Upload>${tag('Key', u.key)}${tag('UploadId', u.id)}<Initiator>${tag('ID', '123456789000')}${tag('DisplayName', 'S3rver')}</Initiator>${owner}${tag('StorageClass', 'STANDARD')}${tag('Initiated', u.initiated.toISOString())}</Upload>`,
            )
            .join(''),
      );
      return;
    }
    return next();
  };
}

const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory: process.env.S3RVER_DIR,
  configureBuckets: [{ name: process.env.S3RVER_BUCKET }],
});
// Before s3rver's router (after its logger): the operations above are answered first.
server.middleware.splice(1, 0, multipartOperations(server.store));
server.run().then((address) => process.stdout.write(JSON.stringify({ port: address.port }) + '\n'));
process.stdin.on('end', () => process.exit(0)).resume(); // the test process went away: stop
