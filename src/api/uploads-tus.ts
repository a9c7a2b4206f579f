import fs from 'node:fs';
import { pipeline, Readable, Transform } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { errorResponses } from '../http/schemas.js';
import { scratchPath } from '../services/media/file-store.js';
import { deleteUploadRecord, findUpload, isExpired, openUploadStore, sweepUploads } from '../services/media/uploads.js';
import type { UploadStore } from '../storage/tus-store.js';
import { bodyReceived } from './upload-memory.js';
import { CHECKSUM_ALGORITHMS, parseChecksum, spoolVerified } from './tus-checksum.js';
import { parseUploadMetadata, uploadInput } from './tus-metadata.js';
import { FILE_ID_HEADER, TUS_EXTENSIONS, TUS_PATH, TUS_VERSION, tusError } from './tus-protocol.js';
import type { TusContext, TusService } from './tus-server.js';

// Resumable uploads: the tus 1.0 protocol at /uploads/tus (docs/uploads.md), served by @tus/server.
// This route does what is mediad's before the library sees a request: the caller (API key with
// files write, session + CSRF, or an upload token), the upload's project (another project's upload
// is a 404), its expiry (410), the protocol's preconditions (412, 415, 413 at creation), the
// Upload-Metadata fields, and Upload-Checksum. Bodies are streamed, never buffered.

const OCTET = 'application/offset+octet-stream';
const SWEEP_MS = 15 * 60 * 1000;

const noBody = { description: 'No body (tus answers in headers)', type: 'null' };
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export function tusHeaders(deps: Deps): Record<string, string> {
  return {
    'tus-resumable': TUS_VERSION,
    'tus-version': TUS_VERSION,
    'tus-extension': TUS_EXTENSIONS.join(','),
    'tus-max-size': String(deps.config.limits.maxFileBytes),
    'tus-checksum-algorithm': CHECKSUM_ALGORITHMS.join(','),
  };
}

/** Tus-Resumable must name 1.0.0 on every request but OPTIONS. */
function checkResumable(req: FastifyRequest): void {
  if (req.headers['tus-resumable'] !== TUS_VERSION)
    throw new AppError(
      'precondition_failed',
      `send Tus-Resumable: ${TUS_VERSION}${req.headers['tus-resumable'] ? ` (version ${String(req.headers['tus-resumable'])} is not supported)` : ''}`,
      { headers: { 'tus-resumable': TUS_VERSION, 'tus-version': TUS_VERSION } },
    );
}

/**
 * Pieces of a body are regrouped to this size before the library's Web stream sees them: under
 * glibc's mmap threshold (128 KiB, the `#!` line of cli.ts), so a piece comes from malloc's
 * heap, where the same size is used again, instead of a mapping of its own whose every page
 * faults in afresh and goes back to the system when V8 collects it (with 1 MiB pieces the two
 * copies into fresh pages were half of a PATCH's CPU time: docs/benchmarks.md).
 */
export const COALESCE_BYTES = 64 * 1024;

/**
 * Regroups a body's pieces (TLS records: 16 KiB) into COALESCE_BYTES buffers. The library reads the
 * body as a Web stream and turns it back into a Node stream, which costs a few promises per piece:
 * at 16 KiB pieces that halved the throughput of a PATCH against a plain PUT.
 */
export async function* coalesce(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let piece = Buffer.allocUnsafeSlow(COALESCE_BYTES);
  let size = 0;
  for await (const chunk of source) {
    bodyReceived(chunk.length);
    for (let at = 0; at < chunk.length;) {
      const n = chunk.copy(piece, size, at);
      at += n;
      size += n;
      if (size === COALESCE_BYTES) {
        yield piece;
        piece = Buffer.allocUnsafeSlow(COALESCE_BYTES);
        size = 0;
      }
    }
  }
  if (size > 0) yield piece.subarray(0, size);
}

/** Bytes of the body read ahead of the library (it writes to disk while more arrives). */
const READ_AHEAD_BYTES = 1024 * 1024;

/**
 * The pieces as the Web stream the library reads. Not Readable.toWeb: it copies every Buffer it
 * passes on (to detach it from Node's pool). Not ReadableStream.from: it reads nothing ahead, so
 * the socket waited for each piece's disk write.
 */
function streamedBody(pieces: AsyncGenerator<Buffer>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await pieces.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel() {
        await pieces.return(undefined);
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: READ_AHEAD_BYTES }),
  );
}

/** The body the library reads: a token for `source` handed to the store, or `source` itself streamed. */
function webBody(tus: TusService, req: FastifyRequest, source: Readable): ReadableStream<Uint8Array> {
  const length = Number(req.headers['content-length']);
  return length >= 1 ? tus.store.handoff.token(counted(source)) : streamedBody(coalesce(source));
}

/** `body` with each piece counted as received (upload-memory.ts), for a body handed to the store. */
function counted(body: Readable): Readable {
  const out = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bodyReceived(chunk.length);
      done(null, chunk);
    },
  });
  // A failure (the client went away) reaches the store's write through `out`, which keeps what came.
  pipeline(body, out, () => {});
  return out;
}

/**
 * The Web Request the library reads, with the body streamed from `body` (the request itself unless
 * given). A body that declares its length is handed to the store (storage/tus-handoff.ts); one sent
 * in chunks without a length goes through the library's stream, whose limiter holds it to the
 * upload's length.
 */
function webRequest(deps: Deps, tus: TusService, req: FastifyRequest, body?: Readable): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) headers.set(name, value.join(', '));
  }
  const withBody = req.method === 'PATCH' || req.method === 'POST';
  return new Request(`${deps.config.publicUrl}${req.url}`, {
    method: req.method,
    headers,
    ...(withBody ? { body: webBody(tus, req, body ?? req.raw), duplex: 'half' } : {}),
  });
}

async function handle(
  service: () => Promise<TusService>,
  deps: Deps,
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: TusContext,
  body?: Readable,
) {
  const tus = await service();
  const request = webRequest(deps, tus, req, body);
  tus.contexts.set(request, ctx);
  let res: Response;
  try {
    res = await tus.server.handleWeb(request);
  } finally {
    if (ctx.finished) await tus.store.remove(ctx.finished);
  }
  if (ctx.error) throw ctx.error;
  const text = await res.text();
  if (res.status >= 400) throw tusError(res.status, text);
  reply.code(res.status);
  res.headers.forEach((value, name) => {
    if (name !== 'content-length' && !name.startsWith('access-control-')) reply.header(name, value);
  });
  if (!req.raw.complete) reply.header('connection', 'close');
  return reply.send();
}

/** The upload of the caller's project named in the URL: 404 if none (or another project's), 410 once expired. */
async function ownUpload(deps: Deps, req: FastifyRequest<{ Params: { id: string } }>) {
  const row = await findUpload(deps, req.auth!.projectId, req.params.id);
  const headers = { 'tus-resumable': TUS_VERSION };
  if (!row) throw new AppError('not_found', `no upload ${req.params.id} in this project`, { headers });
  if (isExpired(deps, row))
    throw new AppError('upload_expired', `the upload ${row.id} expired at ${row.expires} before its last byte`, {
      headers,
    });
  return row;
}

export async function tusRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  // The tus library (and the S3 store's) is loaded by the first upload request, not at start-up.
  let store: Promise<UploadStore> | undefined;
  let service: Promise<TusService> | undefined;
  const uploadStore = () => (store ??= openUploadStore(deps));
  const tus = () =>
    (service ??= Promise.all([import('./tus-server.js'), uploadStore()])
      .then(([m, s]) => m.createTusService(deps, s))
      .catch((err: unknown) => {
        service = undefined; // the next request tries again
        throw err;
      }));
  const sweep = async () => {
    try {
      await sweepUploads(deps, await uploadStore());
    } catch (err) {
      deps.log.warn({ err }, 'upload sweep failed');
    }
  };
  const sweeper = setInterval(() => void sweep(), Math.max(60_000, Math.min(SWEEP_MS, deps.config.uploads.expiryMs)));
  sweeper.unref();
  app.addHook('onClose', async () => {
    clearInterval(sweeper);
    if (service) await (await service).close();
  });
  // Chunks are raw bytes: left unread for the library to stream.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null));
  const ctxOf = (req: FastifyRequest): TusContext => ({ auth: req.auth! });

  app.post(TUS_PATH, { schema: { response: { 201: noBody, ...errorResponses } } }, async (req, reply) => {
    checkResumable(req);
    const length = req.headers['upload-length'];
    if (typeof length === 'string' && /^\d+$/.test(length) && Number(length) > deps.config.limits.maxFileBytes)
      throw new AppError(
        'payload_too_large',
        `Upload-Length ${length} is over the ${deps.config.limits.maxFileBytes}-byte limit (MEDIAD_MAX_FILE_BYTES)`,
        { headers: { 'tus-resumable': TUS_VERSION, 'tus-max-size': String(deps.config.limits.maxFileBytes) } },
      );
    const metadata = req.headers['upload-metadata'];
    const input = uploadInput(parseUploadMetadata(typeof metadata === 'string' ? metadata : undefined));
    return handle(tus, deps, req, reply, { ...ctxOf(req), input });
  });

  app.head<{ Params: { id: string } }>(
    `${TUS_PATH}/:id`,
    { schema: { params: IdParams, response: { 200: noBody, ...errorResponses } } },
    async (req, reply) => {
      checkResumable(req);
      const row = await ownUpload(deps, req);
      if (row.file_id !== null)
        return reply
          .code(200)
          .headers({
            'tus-resumable': TUS_VERSION,
            'cache-control': 'no-store',
            'upload-offset': String(row.length ?? 0),
            'upload-length': String(row.length ?? 0),
            [FILE_ID_HEADER.toLowerCase()]: row.file_id,
          })
          .send();
      return handle(tus, deps, req, reply, ctxOf(req));
    },
  );

  app.patch<{ Params: { id: string } }>(
    `${TUS_PATH}/:id`,
    { schema: { params: IdParams, response: { 204: noBody, ...errorResponses } } },
    async (req, reply) => {
      try {
        checkResumable(req);
        if (req.headers['content-type'] !== OCTET)
          throw new AppError('unsupported_media_type', `a tus PATCH carries Content-Type: ${OCTET}`, {
            headers: { 'tus-resumable': TUS_VERSION },
          });
        const row = await ownUpload(deps, req);
        if (row.file_id !== null)
          throw new AppError('conflict', `the upload is complete: it became the file ${row.file_id}`, {
            headers: { 'tus-resumable': TUS_VERSION, [FILE_ID_HEADER]: row.file_id },
          });
        const checksum = parseChecksum(
          typeof req.headers['upload-checksum'] === 'string' ? req.headers['upload-checksum'] : undefined,
        );
        if (!checksum) return await handle(tus, deps, req, reply, ctxOf(req));
        const tmp = scratchPath(deps, 'tus-chunk');
        try {
          await spoolVerified(req.raw, tmp, checksum);
          return await handle(
            tus,
            deps,
            req,
            reply,
            ctxOf(req),
            fs.createReadStream(tmp, { highWaterMark: 1024 * 1024 }),
          );
        } finally {
          await fs.promises.rm(tmp, { force: true });
        }
      } catch (err) {
        // Refused before the body was read to its end: the connection cannot carry another request.
        if (!req.raw.complete) reply.header('connection', 'close');
        throw err;
      }
    },
  );

  app.delete<{ Params: { id: string } }>(
    `${TUS_PATH}/:id`,
    { schema: { params: IdParams, response: { 204: noBody, ...errorResponses } } },
    async (req, reply) => {
      checkResumable(req);
      const row = await ownUpload(deps, req);
      if (row.file_id !== null)
        throw new AppError(
          'conflict',
          `the upload is complete: it became the file ${row.file_id} (DELETE /files/${row.file_id} removes it)`,
          { headers: { 'tus-resumable': TUS_VERSION } },
        );
      const answer = await handle(tus, deps, req, reply, ctxOf(req));
      await deleteUploadRecord(deps, row.id);
      return answer;
    },
  );
}

// Browsers on other origins (a page holding an upload token): tus over CORS, as tus servers answer
// it. Answers carry `Access-Control-Allow-Origin: *` without credentials, so a browser never sends
// the session cookie cross-origin (and a session's write still needs this origin and its CSRF
// token): only an explicit Bearer token (an upload token or a key) works from another site.
const CORS_ALLOW_HEADERS = [
  'Authorization',
  'Content-Type',
  'Tus-Resumable',
  'Upload-Length',
  'Upload-Defer-Length',
  'Upload-Metadata',
  'Upload-Offset',
  'Upload-Checksum',
  'X-Requested-With',
  'X-HTTP-Method-Override',
  'Accept-Version',
].join(', ');
const CORS_EXPOSE_HEADERS = [
  'Location',
  'Upload-Offset',
  'Upload-Length',
  'Upload-Metadata',
  'Upload-Expires',
  'Tus-Resumable',
  'Tus-Version',
  'Tus-Extension',
  'Tus-Max-Size',
  'Tus-Checksum-Algorithm',
  FILE_ID_HEADER,
  'X-Request-Id',
].join(', ');

/** An onRequest hook of the tus scope, before authentication: every answer (errors too) is readable cross-origin. */
export async function tusCors(req: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (req.headers.origin === undefined) return;
  reply.header('access-control-allow-origin', '*');
  reply.header('access-control-expose-headers', CORS_EXPOSE_HEADERS);
}

/** OPTIONS, without a credential: the tus capabilities (discovery) and CORS preflights. */
export async function tusOptionsRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const answer = async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.headers.origin !== undefined)
      reply.headers({
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'POST, HEAD, PATCH, DELETE, OPTIONS',
        'access-control-allow-headers': CORS_ALLOW_HEADERS,
        'access-control-expose-headers': CORS_EXPOSE_HEADERS,
        'access-control-max-age': '86400',
      });
    return reply.code(204).headers(tusHeaders(deps)).send();
  };
  const schema = { response: { 204: noBody, ...errorResponses } };
  app.options(TUS_PATH, { schema, config: { unversioned: true } }, answer);
  app.options(`${TUS_PATH}/:id`, { schema: { params: IdParams, ...schema }, config: { unversioned: true } }, answer);
}
