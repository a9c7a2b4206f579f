import type { Config } from './config.js';

// Why mediad could not start, in words: a refused database connection, a data directory it cannot
// write, a port another process holds — each with the variable to check and what to do, as the
// configuration check says for a bad value. Unknown errors keep their own message.

interface SystemError extends Error {
  code?: string;
  syscall?: string;
  path?: string;
  address?: string;
  port?: number;
}

/** The error and its causes, outermost first (migrate() wraps the driver's error). */
function chain(err: unknown): SystemError[] {
  const out: SystemError[] = [];
  for (let e: unknown = err; e instanceof Error && out.length < 8; e = (e as { cause?: unknown }).cause)
    out.push(e as SystemError);
  return out;
}

function databaseWhere(config: Config): string {
  if (config.database.dialect === 'sqlite') return config.database.file;
  try {
    const u = new URL(config.database.url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'the configured server';
  }
}

const NETWORK = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET']);
const DENIED = new Set(['EACCES', 'EPERM', 'EROFS']);

/** A readable explanation of a start-up failure, or null when it is not one of the known kinds. */
export function explainStartupError(err: unknown, config: Config): string | null {
  const errors = chain(err);
  const sys = errors.find((e) => e.code !== undefined) ?? errors[0];
  const code = sys?.code ?? '';
  const pgCode = errors.map((e) => e.code).find((c) => c && /^[0-9A-Z]{5}$/.test(c));

  if (sys?.syscall === 'listen' && code === 'EADDRINUSE')
    return `port ${config.port} on ${config.host} is already in use (EADDRINUSE): another mediad or another program listens there. Stop it (\`ss -ltnp 'sport = :${config.port}'\` shows which), or set MEDIAD_PORT to a free port (and MEDIAD_PUBLIC_URL to match).`;
  if (sys?.syscall === 'listen' && DENIED.has(code))
    return `mediad may not listen on port ${config.port} (${code}): ports below 1024 need privileges. Set MEDIAD_PORT to 1024 or above (8443 is the default), or give node the capability (setcap 'cap_net_bind_service=+ep').`;
  if (sys?.syscall === 'listen' && code === 'EADDRNOTAVAIL')
    return `${config.host} is not an address of this machine (EADDRNOTAVAIL): set MEDIAD_HOST to one of its addresses, or 0.0.0.0 for all of them.`;

  if (config.database.dialect === 'postgres' && (NETWORK.has(code) || pgCode)) {
    const where = databaseWhere(config);
    if (pgCode === '28P01' || pgCode === '28000')
      return `PostgreSQL at ${where} refused the user or password (${pgCode}): check the credentials in MEDIAD_DATABASE_URL.`;
    if (pgCode === '3D000')
      return `the database in MEDIAD_DATABASE_URL does not exist at ${where} (3D000): create it (createdb …) or name an existing one.`;
    if (NETWORK.has(code))
      return `mediad cannot reach PostgreSQL at ${where} (${code}): check MEDIAD_DATABASE_URL and that PostgreSQL runs and accepts connections there.`;
  }
  if (config.redisUrl && NETWORK.has(code) && errors.some((e) => /redis/i.test(e.message)))
    return `mediad cannot reach Redis at ${config.redisUrl.replace(/\/\/[^@]*@/, '//')} (${code}): check MEDIAD_REDIS_URL, or unset it to keep rate limits in the database.`;

  const file = errors.find((e) => e.path)?.path;
  const inDataDir = file !== undefined && (file === config.dataDir || file.startsWith(`${config.dataDir}/`));
  if (DENIED.has(code) && (inDataDir || config.database.dialect === 'sqlite'))
    return `mediad cannot write its data directory ${config.dataDir}${file && file !== config.dataDir ? ` (${file})` : ''} (${code}): give the user running mediad write access to it (chown -R or chmod), or set MEDIAD_DATA_DIR to a directory it may write.`;
  if (code === 'ENOSPC')
    return `the disk of ${file ?? config.dataDir} is full (ENOSPC): free space there, or set MEDIAD_DATA_DIR to a disk with room.`;
  if (code === 'SQLITE_CANTOPEN')
    return `mediad cannot open its SQLite database ${databaseWhere(config)} (SQLITE_CANTOPEN): check that MEDIAD_DATA_DIR exists and is writable, or set MEDIAD_DATABASE_URL.`;
  if (config.tls && file && [config.tls.certFile, config.tls.keyFile].includes(file))
    return `mediad cannot read ${file} (${code}): check MEDIAD_TLS_CERT and MEDIAD_TLS_KEY (PEM files the user running mediad may read), or unset both to use the local certificate authority.`;
  if (config.tls && errors.some((e) => /PEM|certificate|private key|key values mismatch/i.test(e.message)))
    return `MEDIAD_TLS_CERT and MEDIAD_TLS_KEY are not a matching PEM certificate and private key (${errors.at(-1)?.message}): check both files, or unset them to use the local certificate authority.`;
  return null;
}
