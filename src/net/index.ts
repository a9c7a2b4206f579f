// Public API of the guarded outbound HTTP client: use this, never a bare fetch/undici call.
export {
  classifyAddress,
  describeClass,
  isAllowedAddress,
  type AddressClass,
  type UrlPolicy,
} from './address-policy.js';
export {
  displayUrl,
  isAllowedHost,
  parseFetchUrl,
  resolveAndCheck,
  systemLookup,
  type CheckedAddress,
  type LookupFn,
} from './url-check.js';
export { sourceName } from './source-name.js';
export {
  createGuardedClient,
  type DownloadOptions,
  type DownloadResult,
  type GuardedClient,
  type GuardedRequestInit,
  type GuardedResponse,
} from './guarded-fetch.js';
