import path from 'node:path';

// Where a client on this machine finds the local certificate authority, as snippets name it:
// relative to the directory mediad runs in when the data dir is inside it (`data/tls/ca.crt` on a
// default install, run from the checkout), else its absolute path; null when the server uses a
// certificate of its own (MEDIAD_TLS_CERT), which clients already trust.

/** Where the local CA and the server certificate it issued are kept (tls/local-ca.ts). */
export function localTlsDir(dataDir: string): string {
  return path.join(dataDir, 'tls');
}

export function localCaPath(dataDir: string): string {
  return path.join(localTlsDir(dataDir), 'ca.crt');
}

export function caFileForClients(
  config: { dataDir: string; tls?: unknown },
  cwd: string = process.cwd(),
): string | null {
  if (config.tls) return null;
  const absolute = localCaPath(config.dataDir);
  const relative = path.relative(cwd, absolute);
  return relative.startsWith('..') || path.isAbsolute(relative) ? absolute : relative;
}
