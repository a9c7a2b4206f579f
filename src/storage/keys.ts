import { AppError } from '../errors.js';

// The one place blob keys are built. Keys are '/'-separated segments; the disk store maps
// them onto directories, so validation here is what keeps every key inside its root.

const MAX_KEY_LENGTH = 1024; // S3's limit; disk paths stay well under PATH_MAX with it

/** Blob of one stored file of a project. */
export function fileBlobKey(projectId: string, fileId: string): string {
  return validateKey(`projects/${segment(projectId)}/files/${segment(fileId)}`);
}

/**
 * Returns `key` if it is safe to use as a blob key, else throws AppError('bad_request').
 * Refused: empty, absolute, backslashes, NUL/control characters, empty segments ('a//b', 'a/'),
 * and segments starting with '.' ('.', '..', and the disk store's '.tmp').
 */
export function validateKey(key: string): string {
  const problem = keyProblem(key);
  if (problem) throw new AppError('bad_request', `Invalid blob key: ${problem}`);
  return key;
}

export function isValidKey(key: string): boolean {
  return keyProblem(key) === null;
}

/** A list() prefix: '' (everything) or a key-like string that may end with '/'. */
export function validatePrefix(prefix: string): string {
  if (prefix === '') return prefix;
  const problem = keyProblem(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
  if (problem) throw new AppError('bad_request', `Invalid blob key prefix: ${problem}`);
  return prefix;
}

function keyProblem(key: string): string | null {
  if (typeof key !== 'string' || key === '') return 'empty';
  if (key.length > MAX_KEY_LENGTH) return 'too long';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'control character';
  if (key.includes('\\')) return 'backslash';
  if (key.startsWith('/')) return 'absolute path';
  for (const part of key.split('/')) {
    if (part === '') return 'empty segment';
    if (part.startsWith('.')) return `segment ${JSON.stringify(part)} starts with a dot`;
  }
  return null;
}

function segment(id: string): string {
  if (id === '' || id.includes('/') || keyProblem(id)) throw new AppError('bad_request', 'Invalid id for a blob key');
  return id;
}

// Packages (adaptive_video): a file whose bytes are a head (the master playlist) and a package of
// entries (playlists, segments) stored under `<file key>.pkg/<entry>`. The blob journal names the
// whole package by `<file key>.pkg`, settled and deleted as a prefix (services/media/blob-journal.ts).

const PACKAGE_SUFFIX = '.pkg';

/** The journal key standing for a file's whole package. */
export function packageKey(fileKey: string): string {
  return validateKey(`${fileKey}${PACKAGE_SUFFIX}`);
}

/** Blob of one entry of a file's package (an entry name is one flat segment). */
export function packageEntryKey(fileKey: string, entry: string): string {
  if (entry.includes('/')) throw new AppError('bad_request', 'Invalid package entry name');
  return validateKey(`${fileKey}${PACKAGE_SUFFIX}/${entry}`);
}

/** For a package key, the file key that owns it; null for any other key. */
export function packageOwner(key: string): string | null {
  // File ids hold no dot, so only a package key ends with the suffix.
  return key.endsWith(PACKAGE_SUFFIX) ? key.slice(0, -PACKAGE_SUFFIX.length) : null;
}

/** A cached image-URL result (services/media/image-url-cache.ts): outside projects/, which the blob reconciler owns. */
export function imageCacheBlobKey(projectId: string, derivativeId: string): string {
  return validateKey(`image-cache/${segment(projectId)}/${segment(derivativeId)}`);
}
