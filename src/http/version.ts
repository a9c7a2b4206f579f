import { AppError } from '../errors.js';

// Date-shaped API versions (SPEC 9). One representation serves all of them today;
// the older dates are accepted because clients of the hosted API send them.
export const API_VERSION_DEFAULT = '2025-08-20';
export const API_VERSIONS: readonly string[] = ['2025-01-01', '2025-07-01', '2025-08-20'];

/** Resolves the Accept-Version header to a known version, or throws unsupported_version. */
export function resolveVersion(header: string | string[] | undefined): string {
  if (header === undefined || header === '') return API_VERSION_DEFAULT;
  const value = Array.isArray(header) ? (header[0] ?? '') : header;
  if (API_VERSIONS.includes(value)) return value;
  throw new AppError(
    'unsupported_version',
    `Accept-Version "${value}" is not a version of this API; known versions: ${API_VERSIONS.join(', ')} (omit the header for ${API_VERSION_DEFAULT})`,
    {
      details: [{ field: 'headers.accept-version', message: `must be one of ${API_VERSIONS.join(', ')}` }],
    },
  );
}
