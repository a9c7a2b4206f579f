import { X509Certificate, createPrivateKey, randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createCa, issueServerCert, type PemPair } from './cert-builder.js';
import { normalizeTlsHosts, type TlsHosts } from './hosts.js';
import { trustSteps } from './trust-steps.js';

export interface LocalTlsOptions {
  /** Directory holding ca.crt, ca.key, server.crt, server.key (created with mode 0700). */
  dir: string;
  /** Extra names/IPs the server cert must cover; localhost, 127.0.0.1 and ::1 are always added. */
  hosts: string[];
  log?: (msg: string) => void;
}

export interface LocalTls {
  /** Server certificate PEM (leaf only: the CA is the trust anchor, there are no intermediates). */
  cert: string;
  key: string;
  caCertPath: string;
  /** The CA certificate's PEM, as written at caCertPath. */
  caCert: string;
  /** True when a CA or server cert was written this time, so the caller can print trustInstructions(). */
  created: boolean;
}

/** Renew a cert this long before it expires, so a long-running server never serves an expired one. */
const RENEW_BEFORE_MS = 30 * 24 * 60 * 60 * 1000;

/** Creates (first run) or reuses a local CA and a server certificate for `hosts`. */
export async function ensureLocalTls(opts: LocalTlsOptions): Promise<LocalTls> {
  const log = opts.log ?? (() => {});
  const hosts = normalizeTlsHosts(opts.hosts);
  const now = new Date();
  await mkdir(opts.dir, { recursive: true, mode: 0o700 });
  const file = (name: string) => join(opts.dir, name);
  let created = false;

  let ca = await loadPair(file('ca.crt'), file('ca.key'), log);
  const caProblem = ca && caUnusable(ca, now);
  if (!ca || caProblem) {
    if (caProblem) log(`local CA unusable (${caProblem}); creating a new one, clients must trust it again`);
    ca = await createCa(`mediad local CA (${hostname()})`.slice(0, 64), { now });
    await writePair(file('ca.crt'), file('ca.key'), ca);
    created = true;
    log(`created local CA ${file('ca.crt')}`);
  }

  let server = created ? null : await loadPair(file('server.crt'), file('server.key'), log);
  const serverProblem = server && serverUnusable(server, ca, hosts, now);
  if (!server || serverProblem) {
    if (serverProblem) log(`server certificate ${serverProblem}; issuing a new one from the existing CA`);
    server = await issueServerCert(ca, hosts, { now });
    await writePair(file('server.crt'), file('server.key'), server);
    created = true;
    log(`issued server certificate for ${[...hosts.dns, ...hosts.ips].join(', ')}`);
  }

  return { cert: server.certPem, key: server.keyPem, caCertPath: file('ca.crt'), caCert: ca.certPem, created };
}

/** How to make clients trust the local CA, as text; printed when ensureLocalTls() reports created. */
export function trustInstructions(caCertPath: string, baseUrl = 'https://localhost:8443'): string {
  return trustSteps(caCertPath, baseUrl).join('\n');
}

function caUnusable(ca: PemPair, now: Date): string | null {
  const x509 = new X509Certificate(ca.certPem);
  if (!x509.ca) return 'ca.crt is not a CA certificate';
  if (!x509.checkPrivateKey(createPrivateKey(ca.keyPem))) return 'ca.key does not match ca.crt';
  return validityProblem(x509, now);
}

function serverUnusable(server: PemPair, ca: PemPair, hosts: TlsHosts, now: Date): string | null {
  const x509 = new X509Certificate(server.certPem);
  const caX509 = new X509Certificate(ca.certPem);
  if (!x509.checkPrivateKey(createPrivateKey(server.keyPem))) return 'does not match server.key';
  if (!x509.checkIssued(caX509) || !x509.verify(caX509.publicKey)) return 'is not signed by the current CA';
  const validity = validityProblem(x509, now);
  if (validity) return validity;
  // Exact SAN match for names (wildcards must not stand in for a requested name, and vice versa).
  const sanDns = new Set(
    [...(x509.subjectAltName ?? '').matchAll(/(?:^|, )DNS:([^,]+)/g)].map((m) => m[1]?.toLowerCase()),
  );
  const missing = [
    ...hosts.dns.filter((h) => !sanDns.has(h)),
    ...hosts.ips.filter((ip) => x509.checkIP(ip) === undefined),
  ];
  return missing.length > 0 ? `does not cover ${missing.join(', ')}` : null;
}

function validityProblem(x509: X509Certificate, now: Date): string | null {
  const from = new Date(x509.validFrom).getTime();
  const to = new Date(x509.validTo).getTime();
  if (!(from <= now.getTime())) return `is not valid before ${x509.validFrom}`;
  if (!(to - now.getTime() > RENEW_BEFORE_MS)) return `expires ${x509.validTo}`;
  return null;
}

/** Reads a cert/key pair; null when either file is missing or unparseable (it then gets replaced). */
async function loadPair(certPath: string, keyPath: string, log: (msg: string) => void): Promise<PemPair | null> {
  let pair: PemPair;
  try {
    pair = { certPem: await readFile(certPath, 'utf8'), keyPem: await readFile(keyPath, 'utf8') };
    new X509Certificate(pair.certPem);
    createPrivateKey(pair.keyPem);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') log(`cannot use ${certPath} / ${keyPath} (${code ?? (err as Error).message}); replacing`);
    return null;
  }
  // Tighten keys left readable by an older version or a manual copy.
  const { mode } = await stat(keyPath);
  if ((mode & 0o077) !== 0) {
    await chmod(keyPath, 0o600);
    log(`tightened permissions of ${keyPath} to 0600`);
  }
  return pair;
}

/** Key first, then cert: a crash in between leaves a mismatch that the next start detects and repairs. */
async function writePair(certPath: string, keyPath: string, pair: PemPair): Promise<void> {
  await writeFileAtomic(keyPath, pair.keyPem, 0o600);
  await writeFileAtomic(certPath, pair.certPem, 0o644);
}

async function writeFileAtomic(path: string, data: string, mode: number): Promise<void> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const fh = await open(tmp, 'wx', mode);
    try {
      await fh.writeFile(data);
      await fh.chmod(mode); // open()'s mode is filtered by the umask; make it exact
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
}
