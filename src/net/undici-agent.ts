// The guarded client's undici Agent, in a module of its own so that undici (~1.3 MB of code and
// a few MB of heap once loaded) is imported by the first outbound request (guarded-fetch.ts),
// not at start-up by every process, most of which never fetch a URL.
import { Agent } from 'undici';
import type { UrlPolicy } from './address-policy.js';
import { createPinnedConnector } from './pinned-connector.js';
import type { LookupFn } from './url-check.js';

export function createAgent(policy: UrlPolicy, lookup: LookupFn): Agent {
  return new Agent({
    connect: createPinnedConnector(policy, lookup),
    headersTimeout: policy.idleTimeoutMs,
    bodyTimeout: policy.idleTimeoutMs,
  });
}
