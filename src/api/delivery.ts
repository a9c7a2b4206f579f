import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { asApiVersion } from '../versions.js';
import { objectBody } from '../http/envelope.js';
import { errorResponses, objectEnvelope } from '../http/schemas.js';
import { FileSchema } from './file-schemas.js';
import { bodyReceived } from './upload-memory.js';
import { etagMatches, prepareBytes } from '../http/range.js';
import { checkAccess } from '../services/access.js';
import { authenticate } from '../services/people/keys.js';
import { scratchPath, storeLocalFile } from '../services/media/file-store.js';
import { findFileByPath, precheck } from '../services/media/files.js';
import { checkFilename, normalizeFolder, splitDeliveryPath } from '../services/media/paths.js';
import { getProjectRow } from '../services/people/projects.js';
import { verifySignature, type SignedMethod } from '../services/media/signatures.js';
import type { Recorder } from '../services/operations/recorder.js';
import { redirectToStore, redirectsToStore, rfc8187 } from './delivery-redirect.js';
import { corsHeaders, findPackageEntry, headsPackage, serveEntry, serveMaster, signerFor } from './delivery-package.js';

// File delivery under /d/<project>/<folder>/<filename>: public by default, signed URLs
// when the project requires them, and signed (or key-authenticated) PUT uploads.

export const DELIVERY_PREFIX = '/d';

type SignedQuery = { expiry?: string; method?: string; signature?: string };

/** Decodes the path after /d/: project id, folder and filename, rejecting anything malformed as 404. */
function parseTarget(req: FastifyRequest): { projectId: string; folder: string; filename: string } {
  const raw = req.url.split('?')[0]!.slice(DELIVERY_PREFIX.length + 1);
  let segments: string[];
  try {
    segments = raw.split('/').map(decodeURIComponent);
  } catch {
    throw new AppError('not_found', 'no file at this address');
  }
  const [projectId, ...rest] = segments;
  const target = splitDeliveryPath(rest);
  if (!projectId || !target) throw new AppError('not_found', 'no file at this address');
  try {
    return { projectId, folder: normalizeFolder(target.folder), filename: checkFilename(target.filename) };
  } catch {
    throw new AppError('not_found', 'no file at this address');
  }
}

async function projectFor(deps: Deps, projectId: string) {
  try {
    return await getProjectRow(deps, projectId);
  } catch {
    throw new AppError('not_found', 'no file at this address');
  }
}

function checkSigned(
  deps: Deps,
  secret: string,
  t: { folder: string; filename: string },
  query: SignedQuery,
  method: SignedMethod,
): void {
  verifySignature(secret, t.folder, t.filename, query, method, Math.floor(deps.clock.now().getTime() / 1000));
}

async function serve(
  deps: Deps,
  recorder: Recorder,
  req: FastifyRequest<{ Querystring: SignedQuery }>,
  reply: FastifyReply,
) {
  const target = parseTarget(req);
  const project = await projectFor(deps, target.projectId);
  // adaptive_video: an entry of a package is covered by its master playlist's signature.
  const entry = await findPackageEntry(deps, project.id, target);
  const signedFor = entry ? { folder: entry.file.folder, filename: entry.file.filename } : target;
  if (req.query.signature !== undefined) checkSigned(deps, project.signing_secret, signedFor, req.query, 'get');
  else if (project.require_signed_delivery === 1)
    throw new AppError(
      'forbidden',
      'this project serves files only through signed URLs; create one with POST /signatures',
    );
  const signedOnly = project.require_signed_delivery === 1;
  corsHeaders(deps, reply, signedOnly);
  if (entry)
    return serveEntry(deps, recorder, req, reply, entry, signedOnly, signerFor(project.signing_secret, req.query));

  const file = await findFileByPath(deps, project.id, target.folder, target.filename);
  if (!file) throw new AppError('not_found', 'no file at this address');
  if (headsPackage(file)) return serveMaster(deps, recorder, req, reply, file, signedOnly);
  const size = Number(file.filesize);
  // A file id never gets other bytes, so the id is a strong validator.
  const etag = `"${file.id}"`;
  reply
    .header('etag', etag)
    .header('last-modified', new Date(file.created).toUTCString())
    .header(
      'cache-control',
      project.require_signed_delivery === 1 ? 'private, max-age=300' : deps.config.delivery.cacheControl,
    )
    .header('accept-ranges', 'bytes')
    .header('x-content-type-options', 'nosniff')
    .header('content-disposition', `inline; filename*=UTF-8''${rfc8187(file.filename)}`);
  if (etagMatches(req.headers['if-none-match'], etag)) return reply.code(304).send();
  if (req.method === 'GET' && redirectsToStore(deps))
    return redirectToStore(deps, reply, file.blob_key, {
      contentType: file.type,
      contentDisposition: `inline; filename*=UTF-8''${rfc8187(file.filename)}`,
    });

  const bytes = prepareBytes(req, reply, { etag, size, type: file.type, noun: 'file' });
  if (!bytes) return reply.send();
  const body = await deps.blobs.read(file.blob_key, bytes.slice);
  // Usage: the bytes handed to the response, counted once it ends (a client that leaves early
  // stops the stream, so only what was sent counts).
  let sent = 0;
  body.on('data', (chunk: Buffer) => {
    sent += chunk.length;
  });
  reply.raw.once('close', () => recorder.addDelivered(project.id, sent));
  return reply.send(body);
}

async function upload(deps: Deps, req: FastifyRequest<{ Querystring: SignedQuery }>, reply: FastifyReply) {
  const target = parseTarget(req);
  const project = await projectFor(deps, target.projectId);
  if (req.query.signature !== undefined) {
    checkSigned(deps, project.signing_secret, target, req.query, 'put');
  } else {
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const auth = token ? await authenticate(deps, token) : null;
    if (!auth || auth.projectId !== project.id) {
      throw new AppError(
        'unauthorized',
        'uploading needs a signed PUT URL (POST /signatures with method "put") or an API key of this project',
        { headers: { 'www-authenticate': 'Bearer realm="mediad"' } },
      );
    }
    checkAccess(auth.principal, 'files', true);
    req.auth = auth;
  }
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > deps.config.limits.maxFileBytes)
    throw new AppError(
      'payload_too_large',
      `the upload is larger than the ${deps.config.limits.maxFileBytes}-byte limit (MEDIAD_MAX_FILE_BYTES)`,
    );
  await precheck(deps, { projectId: project.id }, { folder: target.folder, filename: target.filename });
  const tmp = scratchPath(deps, 'upload');
  try {
    await receive(req, tmp, deps.config.limits.maxFileBytes);
    const file = await storeLocalFile(deps, { projectId: project.id }, tmp, {
      folder: target.folder,
      filename: target.filename,
    });
    req.auth ??= {
      orgId: project.org_id,
      projectId: project.id,
      principal: { type: 'signed_url' },
      apiVersion: asApiVersion(project.api_version),
    };
    req.apiVersion ??= req.auth.apiVersion;
    return reply.code(201).send(
      objectBody(req, file, {
        self: `${deps.config.publicUrl}/files/${file.id}`,
        parent: `${deps.config.publicUrl}/files`,
      }),
    );
  } finally {
    await fsp.rm(tmp, { force: true });
  }
}

/** Streams the request body to a file, stopping at `maxBytes`. */
async function receive(req: FastifyRequest, dest: string, maxBytes: number): Promise<void> {
  let received = 0;
  const limiter = async function* (source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      received += chunk.length;
      bodyReceived(chunk.length);
      if (received > maxBytes)
        throw new AppError(
          'payload_too_large',
          `the upload is larger than the ${maxBytes}-byte limit (MEDIAD_MAX_FILE_BYTES)`,
        );
      yield chunk;
    }
  };
  await pipeline(req.raw, limiter, fs.createWriteStream(dest, { highWaterMark: 1024 * 1024 }));
  if (received === 0)
    throw new AppError('bad_request', 'the upload body is empty; send the file bytes as the PUT body');
}

export async function deliveryRoutes(
  app: FastifyInstance,
  { deps, recorder }: { deps: Deps; recorder: Recorder },
): Promise<void> {
  // Uploads are raw bytes of any type: leave the body unread for the handler to stream.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null));
  // The stored type comes from probing the bytes, never from Content-Type, so the header is
  // dropped before Fastify reads it: an empty or malformed one was a 415 (telling the client
  // to send JSON) where a missing one was a 201.
  app.addHook('onRequest', async (req) => {
    if (req.method === 'PUT') delete req.raw.headers['content-type'];
  });
  // Not versioned API resources: Accept-Version is not theirs to refuse.
  const config = { unversioned: true };
  // HEAD is declared with GET rather than left to Fastify's generated HEAD route: that route's
  // onSend hook rewrites Content-Length to 0 for a body-less reply, and serve() answers HEAD
  // without a body, so HEAD would announce 0 bytes instead of the file's (or the range's) size.
  // Two routes, not one with both methods, so each is its own operation in /openapi.json.
  const fileBytes = {
    description: 'The file’s bytes (the whole file, or the range asked for: 206), with its own Content-Type',
    content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
  };
  const getSchema = { response: { 200: fileBytes, 206: fileBytes, ...errorResponses } };
  app.get<{ Querystring: SignedQuery }>(
    `${DELIVERY_PREFIX}/*`,
    { config, exposeHeadRoute: false, schema: getSchema },
    (req, reply) => serve(deps, recorder, req, reply),
  );
  app.head<{ Querystring: SignedQuery }>(
    `${DELIVERY_PREFIX}/*`,
    { config, schema: { response: errorResponses } },
    (req, reply) => serve(deps, recorder, req, reply),
  );
  const putSchema = { response: { 201: objectEnvelope(FileSchema), ...errorResponses } };
  app.put<{ Querystring: SignedQuery }>(`${DELIVERY_PREFIX}/*`, { config, schema: putSchema }, async (req, reply) => {
    try {
      return await upload(deps, req, reply);
    } catch (err) {
      // A refusal before the body was read to the end (bad signature, over the limit, client gone):
      // the rest of the body must not be read (it may be gigabytes) nor can the connection carry
      // another request, so close it after the error answer. Left open, it idled half-read until a
      // timeout, holding up graceful shutdown (app.close()) for seconds.
      if (!req.raw.complete) reply.header('connection', 'close');
      throw err;
    }
  });
}
