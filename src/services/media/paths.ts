import { AppError } from '../../errors.js';

// Folder and filename rules. They become URL path segments and blob-independent lookups,
// so anything that could change a path's meaning (slashes, dot segments, control
// characters, URL delimiters) is refused with a message rather than silently rewritten.

const SEGMENT = /^[\p{L}\p{N}._~()+,@=-][\p{L}\p{N} ._~()+,@=-]*$/u;
const MAX_LENGTH = 255;

function checkSegment(seg: string, field: string): void {
  if (seg === '.' || seg === '..' || !SEGMENT.test(seg) || seg.endsWith(' ')) {
    throw new AppError(
      'validation_failed',
      `${field} may contain letters, digits, spaces and . _ ~ ( ) + , @ = - (no leading space, no "." or ".." segments), got "${seg}"`,
      {
        details: [{ field, message: 'invalid characters' }],
      },
    );
  }
}

/** "a/b/" and "/a/b" become "a/b"; "" means the project's root. */
export function normalizeFolder(raw: string | undefined): string {
  if (raw === undefined) return '';
  const trimmed = raw.replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return '';
  if (trimmed.length > MAX_LENGTH)
    throw new AppError('validation_failed', `folder is longer than ${MAX_LENGTH} characters`, {
      details: [{ field: 'folder', message: 'too long' }],
    });
  const segments = trimmed.split('/');
  if (segments.length > 16)
    throw new AppError('validation_failed', 'folder may be at most 16 levels deep', {
      details: [{ field: 'folder', message: 'too deep' }],
    });
  for (const s of segments) checkSegment(s, 'folder');
  return segments.join('/');
}

export function checkFilename(raw: string): string {
  if (raw.length === 0 || raw.length > MAX_LENGTH)
    throw new AppError('validation_failed', `filename must be 1 to ${MAX_LENGTH} characters`, {
      details: [{ field: 'filename', message: 'bad length' }],
    });
  checkSegment(raw, 'filename');
  return raw;
}

/** Splits a delivery path ("a/b/name.mp4", already URL-decoded per segment) into folder and filename. */
export function splitDeliveryPath(segments: string[]): { folder: string; filename: string } | null {
  const filename = segments.at(-1);
  if (!filename) return null;
  return { folder: segments.slice(0, -1).join('/'), filename };
}
