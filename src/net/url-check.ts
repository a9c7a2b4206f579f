// URL syntax rules and the resolve-then-classify step for outbound fetches. Every address a
// name resolves to is vetted, and those exact addresses are what the socket may connect to.
import dns from 'node:dns';
import net from 'node:net';
import { AppError } from '../errors.js';
import { classifyAddress, describeClass, type UrlPolicy } from './address-policy.js';

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

/** Same shape as dns.promises.lookup(host, { all: true, verbatim: true }); injectable for tests. */
export type LookupFn = (
  hostname: string,
  options: { all: true; verbatim: true },
) => Promise<Array<{ address: string; family: number }>>;

export const systemLookup: LookupFn = (hostname, options) => dns.promises.lookup(hostname, options);

/** What to do about a refused address: the setting that trusts it (read at start) or an upload. */
function allowHint(url: URL): string {
  const origin = `${bareHost(url.hostname).includes(':') ? `[${bareHost(url.hostname)}]` : bareHost(url.hostname)}:${effectivePort(url)}`;
  return `to trust it, add ${origin} to MEDIAD_ALLOWED_URL_HOSTS (or set MEDIAD_ALLOW_PRIVATE_URLS=true) and restart mediad; a file on your own machine can be uploaded instead (curl -T file to PUT /d/<project>/<folder>/<name>, or mediad upload)`;
}

/** Origin and path only: query strings often carry signed tokens that must not land in logs. */
export function displayUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/**
 * Malformed text is the caller's mistake (bad_request); a well-formed URL we will not
 * fetch on principle (other scheme, credentials) is a refusal (source_refused).
 */
export function parseFetchUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('bad_request', 'the URL is not valid');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AppError('source_refused', `refusing to fetch a ${url.protocol} URL: only http: and https: are allowed`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new AppError(
      'source_refused',
      'refusing to fetch a URL with credentials (user:pass@); pass them another way',
    );
  }
  if (url.hostname === '') throw new AppError('bad_request', 'the URL has no host');
  return url;
}

function bareHost(hostname: string): string {
  const h = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return h.toLowerCase().replace(/\.$/, '');
}

function effectivePort(url: URL): string {
  return url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
}

/** Split an allowHosts entry ("host", "host:port", "[v6]", "[v6]:port", bare v6) and normalise the host like URL does. */
function parseAllowEntry(entry: string): { host: string; port: string | null } | null {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry) ?? /^([^:]+)(?::(\d+))?$/.exec(entry);
  const host = m ? m[1]! : net.isIPv6(entry) ? entry : null;
  if (host === null) return null;
  try {
    const hostname = new URL(`http://${net.isIPv6(host) ? `[${host}]` : host}/`).hostname;
    return { host: bareHost(hostname), port: m?.[2] ?? null };
  } catch {
    return null;
  }
}

/** True when the operator trusts this exact host (any port) or host:port. */
export function isAllowedHost(url: URL, allowHosts: readonly string[]): boolean {
  const host = bareHost(url.hostname);
  const port = effectivePort(url);
  return allowHosts.some((entry) => {
    const e = parseAllowEntry(entry.trim());
    return e !== null && e.host === host && (e.port === null || Number(e.port) === Number(port));
  });
}

/**
 * Resolve url's host (IP literals skip DNS) and vet EVERY address: one private answer
 * refuses the whole name, so a mixed public/private record cannot be raced.
 */
export async function resolveAndCheck(
  url: URL,
  policy: Pick<UrlPolicy, 'allowPrivate' | 'allowHosts'>,
  lookup: LookupFn = systemLookup,
): Promise<CheckedAddress[]> {
  const host = bareHost(url.hostname);
  let answers: Array<{ address: string }>;
  if (net.isIP(host) !== 0) {
    answers = [{ address: host }];
  } else {
    try {
      answers = await lookup(host, { all: true, verbatim: true });
    } catch (err) {
      const code = (err as { code?: string }).code;
      throw new AppError('source_unreachable', `could not resolve ${host}${code ? ` (${code})` : ''}`, { cause: err });
    }
    if (answers.length === 0) throw new AppError('source_unreachable', `could not resolve ${host}: no addresses`);
  }

  const trusted = policy.allowPrivate || isAllowedHost(url, policy.allowHosts);
  const checked: CheckedAddress[] = [];
  for (const { address } of answers) {
    const cls = classifyAddress(address);
    if (cls === 'invalid') {
      throw new AppError('source_unreachable', `could not resolve ${host}: got an invalid address`);
    }
    if (!trusted && cls !== 'public') {
      const what = address === host ? `${address} is` : `${host} resolves to ${address}, which is`;
      throw new AppError(
        'source_refused',
        `refusing to fetch ${displayUrl(url)}: ${what} ${describeClass(cls)}; ${allowHint(url)}`,
      );
    }
    checked.push({ address, family: net.isIPv6(address) ? 6 : 4 });
  }
  return checked;
}
