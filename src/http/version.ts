import { AppError } from '../errors.js';
import { API_VERSIONS, isApiVersion, LATEST_VERSION, type ApiVersion } from '../versions.js';

// Date-shaped API versions (SPEC 9), in two generations of the wire format:
// - the envelope generation (2025-01-01, 2025-07-01): every answer is {meta, data, error, links},
//   what SPEC.md describes and the 0.x SDKs read;
// - the bare generation (2025-08-20): an object is answered as itself, a list as an array with
//   its pagination in a Link header and its total in X-Total-Count, an error as {code, message,
//   status, details?}; what the 1.0 SDKs read.
// A request's version is its Accept-Version header, else ACCEPT_VERSION (sent by the 1.0 SDKs'
// `version` option), else its project's default (PATCH /project {api_version}); `latest` is the
// newest. Routes never see the generation: http/representation.ts turns their envelope into it.

/** An API version as a client names it: a known date, or `latest`; anything else is refused. */
export function parseVersion(value: string, field: string): ApiVersion {
  if (value === 'latest') return LATEST_VERSION;
  if (isApiVersion(value)) return value;
  throw new AppError(
    'unsupported_version',
    `${field} "${value}" is not a version of this API; known versions: ${API_VERSIONS.join(', ')} or latest (omit it for your project's default)`,
    {
      details: [{ field, message: `must be one of ${API_VERSIONS.join(', ')}, latest` }],
    },
  );
}

/** The version the request asks for in its headers (Accept-Version, else ACCEPT_VERSION), or undefined. */
export function requestedVersion(headers: Record<string, string | string[] | undefined>): ApiVersion | undefined {
  for (const name of ['accept-version', 'accept_version']) {
    const raw = headers[name];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value !== undefined && value !== '') return parseVersion(value.trim(), `headers.${name}`);
  }
  return undefined;
}

/**
 * The version a request asks for, for an error's answer: none when it names none or one that does
 * not exist (refusing an unknown version is not an error answer's business; it takes the default).
 */
export function versionForError(headers: Record<string, string | string[] | undefined>): ApiVersion | undefined {
  try {
    return requestedVersion(headers);
  } catch {
    return undefined;
  }
}
