// The API's versions and their generations (what each means: http/version.ts).

export const API_VERSIONS = ['2025-01-01', '2025-07-01', '2025-08-20'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];
export type Generation = 'envelope' | 'bare';

export const LATEST_VERSION: ApiVersion = '2025-08-20';
/** New projects, and requests that have no project (a refused key), get the envelope generation (SPEC). */
export const DEFAULT_VERSION: ApiVersion = '2025-07-01';

export function isApiVersion(v: string): v is ApiVersion {
  return (API_VERSIONS as readonly string[]).includes(v);
}

/** A stored version (a project's default); an unknown one (a downgrade) falls back to the default. */
export function asApiVersion(v: string): ApiVersion {
  return isApiVersion(v) ? v : DEFAULT_VERSION;
}

export function generationOf(version: ApiVersion): Generation {
  return version === '2025-08-20' ? 'bare' : 'envelope';
}
