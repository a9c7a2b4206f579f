import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { parseRange, etagMatches } from '../http/range.js';
import {
  HLS_MIME,
  PACKAGE_ENTRY,
  addSubtitleRenditions,
  subtitlePlaylist,
  isPlaylistEntry,
  packageEntryMime,
  rewriteManifest,
  rewritePlaylist,
} from '../media/index.js';
import { findFileByPath } from '../services/media/files.js';
import { deliveryUrl, FILE_COLUMNS, HLS_DASH_FORMAT } from '../shapes/files.js';
import { sign } from '../services/media/signatures.js';
import { packageEntryKey } from '../storage/keys.js';
import type { Recorder } from '../services/operations/recorder.js';
import { redirectToStore, redirectsToStore } from './delivery-redirect.js';

// Delivery of adaptive_video packages (docs/tasks.md, "Adaptive streaming"): the master playlist
// is the file's own address, its entries (variant playlists, segments, the DASH manifest) live
// under `<file address>.pkg/<entry>`. Playlists are rewritten as they are served: the master's
// URIs point into the package, and a signed request's signature is carried into every URI, so
// one signed master URL plays end to end (the signature of the master covers its package).

type FileRow = NonNullable<Awaited<ReturnType<typeof findFileByPath>>>;
type SignedQuery = { expiry?: string; method?: string; signature?: string };

/** Signs another file of the project for the same expiry as the request (signed delivery), or null. */
export type Signer = ((folder: string, filename: string) => string) | null;

/** A signer from a signed request's expiry and the project's secret; null for unsigned requests. */
export function signerFor(secret: string, query: SignedQuery): Signer {
  if (query.signature === undefined) return null;
  const expiry = Number(query.expiry);
  return (folder, filename) =>
    `?expiry=${expiry}&method=get&signature=${sign(secret, folder, filename, expiry, 'get')}`;
}

const SUBTITLES_ENTRY = /^subtitles_(file_[A-Za-z0-9]+)\.m3u8$/;

/** The WebVTT subtitles tracks of the package's media (made by the subtitles kind), oldest first. */
async function subtitleFiles(deps: Deps, file: FileRow, id?: string) {
  let q = deps.db
    .selectFrom('files')
    .select([...FILE_COLUMNS])
    .where('project_id', '=', file.project_id)
    .where('media_id', '=', file.media_id)
    .where('kind', '=', 'subtitles')
    .where('status', '=', 'ready')
    .where('type', 'like', 'text/vtt%');
  if (id) q = q.where('id', '=', id);
  return q.orderBy('created').limit(8).execute();
}

function languageOf(metadata: string): string {
  try {
    const m: unknown = JSON.parse(metadata);
    if (m && typeof m === 'object' && 'language' in m && typeof m.language === 'string' && m.language)
      return m.language;
  } catch {
    // no language: und
  }
  return 'und';
}

/** Whether a file row heads a package (an adaptive_video master playlist). */
export function headsPackage(file: { type: string; format: string | null }): boolean {
  return file.type.startsWith(HLS_MIME) && (file.format === 'hls' || file.format === HLS_DASH_FORMAT);
}

/**
 * `<folder>/<name>.pkg/<entry>` → the package's head file and the entry, when such a file heads a
 * package; null otherwise (the address is then an ordinary file's).
 */
export async function findPackageEntry(
  deps: Deps,
  projectId: string,
  target: { folder: string; filename: string },
): Promise<{ file: FileRow; entry: string } | null> {
  const parts = target.folder.split('/');
  const last = parts.pop();
  if (!last?.endsWith('.pkg') || !PACKAGE_ENTRY.test(target.filename)) return null;
  const file = await findFileByPath(deps, projectId, parts.join('/'), last.slice(0, -'.pkg'.length));
  return file && headsPackage(file) ? { file, entry: target.filename } : null;
}

/** Access-Control-Allow-Origin: the configured origin, else `*` where delivery is public. */
export function corsHeaders(deps: Deps, reply: FastifyReply, signedOnly: boolean): void {
  const origin = deps.config.deliveryCorsOrigin ?? (signedOnly ? null : '*');
  if (!origin) return;
  reply
    .header('access-control-allow-origin', origin)
    .header('access-control-expose-headers', 'content-length, content-range, etag');
  if (origin !== '*') reply.header('vary', 'origin');
}

/** The query a signed request's URIs carry on, or '' for unsigned delivery. */
function signedQuery(query: SignedQuery): string {
  if (query.signature === undefined) return '';
  const p = new URLSearchParams();
  p.set('expiry', query.expiry ?? '');
  p.set('method', query.method ?? '');
  p.set('signature', query.signature);
  return `?${p.toString()}`;
}

async function readText(deps: Deps, key: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await deps.blobs.read(key)) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

function sendPlaylist(
  req: FastifyRequest,
  reply: FastifyReply,
  recorder: Recorder,
  file: Pick<FileRow, 'project_id' | 'status'>,
  type: string,
  text: string,
  signedOnly: boolean,
) {
  const body = Buffer.from(text);
  // Short caching: a playlist is small, and a signed one carries signatures that expire; a
  // package still being made (processing) grows with every segment, so it is not cached at all.
  const maxAge = file.status === 'processing' ? 'no-cache' : 'max-age=60';
  reply
    .type(type)
    .header('cache-control', `${signedOnly ? 'private' : 'public'}, ${maxAge}`)
    .header('x-content-type-options', 'nosniff')
    .header('content-length', body.length);
  if (req.method === 'HEAD') return reply.send();
  recorder.addDelivered(file.project_id, body.length);
  return reply.send(body);
}

/** The master playlist (the file's own address), its URIs pointing into its package. */
export async function serveMaster(
  deps: Deps,
  recorder: Recorder,
  req: FastifyRequest<{ Querystring: SignedQuery }>,
  reply: FastifyReply,
  file: FileRow,
  signedOnly: boolean,
) {
  const text = await readText(deps, file.blob_key);
  const prefix = `${encodeURIComponent(file.filename)}.pkg/`;
  const query = signedQuery(req.query);
  // The media's subtitles tracks, whenever they were made, as WebVTT renditions.
  const subtitles = (await subtitleFiles(deps, file)).map((s) => {
    const language = languageOf(s.metadata);
    return {
      name: `${language === 'und' ? 'Subtitles' : language}${s.ref && s.ref !== 'subtitles' ? ` (${s.ref})` : ''}`,
      language,
      uri: `${prefix}subtitles_${s.id}.m3u8${query}`,
    };
  });
  const body = addSubtitleRenditions(rewritePlaylist(text, prefix, query), subtitles);
  return sendPlaylist(req, reply, recorder, file, HLS_MIME, body, signedOnly);
}

/** One entry of a package: a playlist (rewritten for signed delivery) or a segment (ranges, long caching). */
export async function serveEntry(
  deps: Deps,
  recorder: Recorder,
  req: FastifyRequest<{ Querystring: SignedQuery }>,
  reply: FastifyReply,
  found: { file: FileRow; entry: string },
  signedOnly: boolean,
  signer: Signer,
) {
  const { file, entry } = found;
  const subtitlesId = SUBTITLES_ENTRY.exec(entry)?.[1];
  if (subtitlesId) {
    const [track] = await subtitleFiles(deps, file, subtitlesId);
    if (!track) throw new AppError('not_found', 'no file at this address');
    const url = deliveryUrl(deps.config.publicUrl, track.project_id, track.folder, track.filename);
    const vtt = `${url}${signer ? signer(track.folder, track.filename) : ''}`;
    const duration = track.duration ?? file.duration ?? 0;
    return sendPlaylist(req, reply, recorder, file, HLS_MIME, subtitlePlaylist(vtt, duration), signedOnly);
  }
  const key = packageEntryKey(file.blob_key, entry);
  const type = packageEntryMime(entry);
  if (isPlaylistEntry(entry)) {
    let text: string;
    try {
      text = await readText(deps, key);
    } catch {
      throw new AppError('not_found', 'no file at this address');
    }
    const query = signedQuery(req.query);
    const body = entry.endsWith('.mpd') ? rewriteManifest(text, query) : rewritePlaylist(text, '', query);
    return sendPlaylist(req, reply, recorder, file, type, body, signedOnly);
  }
  const stat = await deps.blobs.stat(key);
  if (!stat) throw new AppError('not_found', 'no file at this address');
  const size = stat.size;
  // Entries of a file never change: its id and the entry name are a strong validator.
  const etag = `"${file.id}/${entry}"`;
  reply
    .header('etag', etag)
    .header('last-modified', new Date(file.created).toUTCString())
    .header('cache-control', signedOnly ? 'private, max-age=86400' : 'public, max-age=31536000, immutable')
    .header('accept-ranges', 'bytes')
    .header('x-content-type-options', 'nosniff');
  if (etagMatches(req.headers['if-none-match'], etag)) return reply.code(304).send();
  // A segment is served as stored: with MEDIAD_S3_DELIVERY=redirect the bucket serves it.
  if (req.method === 'GET' && redirectsToStore(deps)) return redirectToStore(deps, reply, key, { contentType: type });
  const ifRange = req.headers['if-range'];
  const range = ifRange && ifRange !== etag ? { kind: 'full' as const } : parseRange(req.headers.range, size);
  reply.type(type);
  if (range.kind === 'unsatisfiable')
    throw new AppError('range_not_satisfiable', `the requested range is outside the entry's ${size} bytes`, {
      headers: { 'content-range': `bytes */${size}` },
    });
  const slice = range.kind === 'partial' ? { start: range.start, end: range.end } : undefined;
  if (slice) reply.code(206).header('content-range', `bytes ${slice.start}-${slice.end}/${size}`);
  reply.header('content-length', slice ? slice.end - slice.start + 1 : size);
  if (req.method === 'HEAD') return reply.send();
  const body = await deps.blobs.read(key, slice);
  let sent = 0;
  body.on('data', (chunk: Buffer) => {
    sent += chunk.length;
  });
  reply.raw.once('close', () => recorder.addDelivered(file.project_id, sent));
  return reply.send(body);
}
