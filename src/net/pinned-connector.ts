// The undici connector behind the guarded client. Every new connection re-runs
// resolveAndCheck and the socket may only connect to the addresses that check returned, so
// a DNS answer that changes between the check and the connect (rebinding) is never used.
import type { LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import type { UrlPolicy } from './address-policy.js';
import { resolveAndCheck, systemLookup, type CheckedAddress, type LookupFn } from './url-check.js';

/**
 * A `net.connect` lookup that never asks DNS: it answers with the vetted addresses only.
 * Honours `all` (Node's happy-eyeballs path) and a requested family.
 */
export function pinnedLookup(hostname: string, addrs: readonly CheckedAddress[]): LookupFunction {
  return (name, options, callback) => {
    const wanted =
      options.family === 4 || options.family === 6 ? addrs.filter((a) => a.family === options.family) : addrs;
    const first = wanted[0];
    if (name.toLowerCase() !== hostname.toLowerCase() || first === undefined) {
      // Fail closed: asked for a name we did not vet, or a family we have no vetted address for.
      const err = Object.assign(new Error(`no vetted address for ${name}`), { code: 'ENOTFOUND' });
      callback(err, '', 4);
      return;
    }
    if (options.all)
      callback(
        null,
        wanted.map((a) => ({ address: a.address, family: a.family })),
      );
    else callback(null, first.address, first.family);
  };
}

export function createPinnedConnector(policy: UrlPolicy, lookup: LookupFn = systemLookup): buildConnector.connector {
  return (opts, callback) => {
    let origin: URL;
    try {
      // `host` keeps IPv6 brackets and a non-default port, so allowHosts "host:port" can match.
      origin = new URL(`${opts.protocol}//${opts.host ?? opts.hostname}/`);
    } catch (err) {
      callback(err as Error, null);
      return;
    }
    resolveAndCheck(origin, policy, lookup).then(
      (addrs) => {
        // A connector per connection because the lookup must be bound to this check's result;
        // net.connect skips lookup for IP literals, which resolveAndCheck has just vetted.
        const connect = buildConnector({
          timeout: policy.connectTimeoutMs,
          lookup: pinnedLookup(opts.hostname, addrs),
          maxCachedSessions: 0,
        });
        connect(opts, callback);
      },
      (err: Error) => callback(err, null),
    );
  };
}
