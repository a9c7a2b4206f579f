import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

/** Names the server certificate must always cover, whatever the config says. */
export const DEFAULT_TLS_HOSTS = ['localhost', '127.0.0.1', '::1'] as const;

export interface TlsHosts {
  /** Lower-case ASCII (punycode) DNS names, wildcards allowed as a leading `*.`. */
  dns: string[];
  /** IP literals in canonical form (IPv6 compressed, no brackets). */
  ips: string[];
}

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/**
 * Splits configured hosts into DNS names and IP literals, canonicalised so that
 * "LOCALHOST.", "[::1]" and "0:0:0:0:0:0:0:1" don't make the SAN list grow.
 */
export function normalizeTlsHosts(hosts: readonly string[]): TlsHosts {
  const dns = new Set<string>();
  const ips = new Set<string>();
  for (const raw of [...DEFAULT_TLS_HOSTS, ...hosts]) {
    let host = raw.trim();
    if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
    if (host === '') continue;
    const family = isIP(host);
    if (family === 4) {
      ips.add(host);
    } else if (family === 6) {
      ips.add(canonicalIPv6(host, raw));
    } else {
      dns.add(normalizeDnsName(host, raw));
    }
  }
  return { dns: [...dns], ips: [...ips] };
}

function canonicalIPv6(host: string, raw: string): string {
  // Zone ids (fe80::1%eth0) cannot appear in a certificate; URL parsing rejects them.
  try {
    return new URL(`http://[${host}]/`).hostname.slice(1, -1);
  } catch {
    throw new Error(`TLS host ${JSON.stringify(raw)} is not a usable IPv6 address`);
  }
}

function normalizeDnsName(host: string, raw: string): string {
  const wildcard = host.startsWith('*.');
  const rest = wildcard ? host.slice(2) : host;
  // domainToASCII lower-cases and punycodes; it returns '' for invalid names.
  const ascii = domainToASCII(rest.replace(/\.$/, ''));
  const labels = ascii.split('.');
  if (ascii === '' || ascii.length > 253 || !labels.every((l) => LABEL.test(l))) {
    throw new Error(`TLS host ${JSON.stringify(raw)} is not a valid DNS name or IP address`);
  }
  return wildcard ? `*.${ascii}` : ascii;
}
