import { AppError, type ErrorDetail } from '../errors.js';
import type { NewFileInput } from '../services/media/file-store.js';
import { checkFilename, normalizeFolder } from '../services/media/paths.js';

// Upload-Metadata (tus 1.0 creation): comma-separated `key base64value` pairs. The keys are the
// fields of the other upload routes (POST /files, PUT /d/…), checked here, at creation, so a bad
// value refuses the upload before its first byte rather than at its last. Uppy's own keys (`name`,
// `type`, `relativePath`) are understood so an Uppy Dashboard works without configuration.

export const METADATA_KEYS = ['filename', 'filetype', 'folder', 'ref', 'media_id', 'metadata'] as const;
const UPPY_KEYS = ['name', 'type', 'relativePath'] as const;
const KNOWN = new Set<string>([...METADATA_KEYS, ...UPPY_KEYS]);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const KEY = /^[^\s,]+$/;
const REF = /^[A-Za-z0-9_.-]{1,64}$/;
const MIME = /^[\w.+-]+\/[\w.+-]+(?:\s*;.*)?$/;

const bad = (field: string, message: string) =>
  new AppError('bad_request', `Upload-Metadata: ${field} ${message}`, {
    details: [{ field: `Upload-Metadata.${field}`, message }],
  });

/** The raw pairs of an Upload-Metadata header; a malformed pair or base64 value, or an unknown key, is a 400 naming it. */
export function parseUploadMetadata(header: string | undefined): Map<string, string> {
  const pairs = new Map<string, string>();
  if (header === undefined || header.trim() === '') return pairs;
  for (const part of header.split(',')) {
    const [key = '', value, ...rest] = part.trim().split(' ');
    if (!KEY.test(key) || rest.length > 0) throw bad(key || '(empty key)', 'is not a "key base64value" pair');
    if (!KNOWN.has(key))
      throw bad(key, `is not a known key; use ${METADATA_KEYS.join(', ')} (Uppy's name and type are read too)`);
    if (pairs.has(key)) throw bad(key, 'is given twice');
    if (value !== undefined && !BASE64.test(value)) throw bad(key, 'is not valid base64');
    const text = value === undefined ? '' : Buffer.from(value, 'base64').toString('utf8');
    if (text.includes('\u0000')) throw bad(key, 'contains the character U+0000');
    pairs.set(key, text);
  }
  return pairs;
}

/** What the creation asks for: the same fields and rules as POST /files, and the declared type. */
export interface UploadInput extends NewFileInput {
  filetype?: string;
}

/** Checks every field at once; all problems are named in one 400 validation_failed answer. */
export function uploadInput(pairs: Map<string, string>): UploadInput {
  const input: UploadInput = {};
  const details: ErrorDetail[] = [];
  const check = (field: string, run: () => void) => {
    try {
      run();
    } catch (err) {
      details.push({ field: `Upload-Metadata.${field}`, message: err instanceof Error ? err.message : String(err) });
    }
  };
  const filename = pairs.get('filename') ?? pairs.get('name');
  if (filename !== undefined)
    check('filename', () => {
      if (filename.length > 255) throw new Error('must be at most 255 characters');
      input.filename = checkFilename(filename);
    });
  const folder = pairs.get('folder');
  if (folder !== undefined)
    check('folder', () => {
      if (folder.length > 255) throw new Error('must be at most 255 characters');
      input.folder = normalizeFolder(folder);
    });
  const ref = pairs.get('ref');
  if (ref !== undefined)
    check('ref', () => {
      if (!REF.test(ref)) throw new Error('must be 1 to 64 of A-Z a-z 0-9 _ . -');
      input.ref = ref;
    });
  const mediaId = pairs.get('media_id');
  if (mediaId !== undefined)
    check('media_id', () => {
      if (mediaId.length === 0 || mediaId.length > 64) throw new Error('must be a media id');
      input.media_id = mediaId;
    });
  const filetype = pairs.get('filetype') ?? pairs.get('type');
  if (filetype !== undefined && filetype !== '')
    check('filetype', () => {
      if (filetype.length > 255 || !MIME.test(filetype)) throw new Error('must be a media type such as video/mp4');
      input.filetype = filetype;
    });
  const metadata = pairs.get('metadata');
  if (metadata !== undefined)
    check('metadata', () => {
      let value: unknown;
      try {
        value = JSON.parse(metadata);
      } catch {
        throw new Error('must be a JSON object');
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('must be a JSON object');
      input.metadata = Object.fromEntries(Object.entries(value));
    });
  if (details.length > 0)
    throw new AppError('validation_failed', `Upload-Metadata: ${details.map((d) => d.field).join(', ')} invalid`, {
      details,
    });
  return input;
}
