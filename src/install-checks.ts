import { X509Certificate, createPrivateKey } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import https from 'node:https';
import path from 'node:path';
import { sql } from 'kysely';
import type { Config } from './config.js';
import { openDatabase, pendingMigrations, sqliteFile, type Db } from './db/connect.js';
import { ffmpegHasFilter, runTool } from './media/index.js';
import { PACKAGE } from './package-info.js';
import { explainStartupError } from './startup-errors.js';
import { localCaPath, localTlsDir } from './tls/ca-file.js';

// `mediad doctor`'s checks of the install beyond the intelligence engines (doctor.ts): Node's
// version, the data directory (writable, free space), the database (reachable, migrated), the TLS
// files (valid, matching, covering MEDIAD_PUBLIC_URL, their expiry), the port, and the FFmpeg
// encoders and filters the task kinds use. Each says what to do when it is not fine.

export type CheckState = 'ok' | 'warning' | 'problem';
export interface InstallCheck {
  check: string;
  state: CheckState;
  detail: string;
}

const ok = (check: string, detail: string): InstallCheck => ({ check, state: 'ok', detail });
const warn = (check: string, detail: string): InstallCheck => ({ check, state: 'warning', detail });
const problem = (check: string, detail: string): InstallCheck => ({ check, state: 'problem', detail });

const DAY = 86_400_000;
const GIB = 1024 ** 3;

/** Node's version against package.json's engines (">=20.19.0"). */
export function checkNode(version = process.versions.node, range = PACKAGE.nodeRange): InstallCheck {
  const min = /^>=\s*(\d+)\.(\d+)\.(\d+)$/.exec(range.trim());
  if (!min) return ok('node', `Node ${version}`);
  const have = version.split('.').map(Number);
  const want = min.slice(1).map(Number);
  for (let i = 0; i < 3; i++) {
    if (have[i]! > want[i]!) break;
    if (have[i]! < want[i]!)
      return problem(
        'node',
        `Node ${version} is older than mediad supports (${range}): install Node ${want.join('.')} or newer`,
      );
  }
  return ok('node', `Node ${version} (mediad supports ${range})`);
}

async function checkDataDir(config: Config): Promise<InstallCheck[]> {
  const dir = config.dataDir;
  const probe = path.join(dir, `.doctor-${process.pid}`);
  try {
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(probe, 'ok');
    await fs.rm(probe);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    return [
      problem(
        'data dir',
        `${dir} is not writable (${code}): give the user running mediad write access, or set MEDIAD_DATA_DIR`,
      ),
    ];
  }
  const s = await fs.statfs(dir);
  const free = s.bavail * s.bsize;
  const text = `${dir}: writable, ${(free / GIB).toFixed(1)} GiB free`;
  if (free < 256 * 1024 ** 2)
    return [problem('data dir', `${text}: too little for uploads and tasks; free space there`)];
  if (free < 2 * GIB) return [warn('data dir', `${text}: uploads and video tasks may run out of room`)];
  return [ok('data dir', text)];
}

async function checkDatabase(config: Config): Promise<InstallCheck> {
  const file = sqliteFile(config.database);
  if (file && !(await fs.stat(file).catch(() => null)))
    return warn('database', `${file} does not exist yet: the first start (or mediad migrate) creates it`);
  const where = file ?? 'PostgreSQL (MEDIAD_DATABASE_URL)';
  const database = openDatabase(config.database);
  try {
    const pending = await pendingMigrations(database.db);
    if (pending.length > 0)
      return warn(
        'database',
        `${where}: reachable; ${pending.length} migration(s) to apply (mediad migrate, or the next start)`,
      );
    // Tasks pass through their table: a claim and a completion each leave a dead row version behind.
    if (config.database.dialect === 'postgres' && !(await autovacuumOn(database.db)))
      return warn(
        'database',
        `${where}: reachable, migrated; autovacuum is off on this PostgreSQL server, so the row versions each task leaves behind (two or more) are never reclaimed, the tables and their indexes only grow, and the planner never gets statistics: set autovacuum = on in postgresql.conf and reload PostgreSQL`,
      );
    return ok('database', `${where}: reachable, migrated`);
  } catch (err) {
    return problem('database', explainStartupError(err, config) ?? `${where}: ${(err as Error).message}`);
  } finally {
    await database.close().catch(() => {});
  }
}

/** Whether PostgreSQL's autovacuum runs (it needs track_counts too). */
async function autovacuumOn(db: Db): Promise<boolean> {
  const { rows } = await sql<{
    on: boolean;
  }>`select current_setting('autovacuum') = 'on' and current_setting('track_counts') = 'on' as on`.execute(db);
  return rows[0]?.on === true;
}

function certificateFacts(name: string, pem: string, keyPem: string, publicUrl: string): InstallCheck {
  const x509 = new X509Certificate(pem);
  if (!x509.checkPrivateKey(createPrivateKey(keyPem)))
    return problem(name, 'the certificate and its key do not match: set both MEDIAD_TLS_CERT and MEDIAD_TLS_KEY again');
  const host = new URL(publicUrl).hostname.replace(/^\[|\]$/g, '');
  const covers = net.isIP(host) ? x509.checkIP(host) !== undefined : x509.checkHost(host) !== undefined;
  const days = Math.floor((new Date(x509.validTo).getTime() - Date.now()) / DAY);
  const text = `valid until ${new Date(x509.validTo).toISOString().slice(0, 10)} (${days} days)`;
  if (days < 0) return problem(name, `expired ${-days} days ago: renew it (the local CA's is renewed at start)`);
  if (!covers)
    return problem(
      name,
      `does not cover ${host}, the host of MEDIAD_PUBLIC_URL: browsers will refuse it (a local certificate is reissued at start; your own must name it)`,
    );
  return days < 30 ? warn(name, `${text}: renew it soon`) : ok(name, `${text}, covers ${host}`);
}

async function checkTls(config: Config): Promise<InstallCheck[]> {
  const files = config.tls
    ? { cert: config.tls.certFile, key: config.tls.keyFile, name: 'tls (MEDIAD_TLS_CERT)' }
    : {
        cert: path.join(localTlsDir(config.dataDir), 'server.crt'),
        key: path.join(localTlsDir(config.dataDir), 'server.key'),
        name: 'tls (local CA)',
      };
  let cert: string;
  let key: string;
  try {
    [cert, key] = await Promise.all([fs.readFile(files.cert, 'utf8'), fs.readFile(files.key, 'utf8')]);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!config.tls && code === 'ENOENT')
      return [warn(files.name, 'not created yet: the first start makes the local CA and its certificate')];
    return [problem(files.name, `cannot read ${files.cert} / ${files.key} (${code}): check the paths and permissions`)];
  }
  try {
    const out = [certificateFacts(files.name, cert, key, config.publicUrl)];
    if (!config.tls) {
      const caFile = localCaPath(config.dataDir);
      const ca = new X509Certificate(await fs.readFile(caFile, 'utf8'));
      out.push(ok('tls CA', `${caFile}, SHA-256 ${ca.fingerprint256}`));
    }
    return out;
  } catch (err) {
    return [problem(files.name, `not a PEM certificate and key (${(err as Error).message})`)];
  }
}

/** Whether a mediad answers on the port (it is running: the port is rightly taken). */
function mediadAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    // Loopback, to this machine's own server; its certificate is checked elsewhere.
    const req = https.get(
      { host: '127.0.0.1', port, path: '/health', rejectUnauthorized: false, timeout: 3000 },
      (res) => {
        res.resume();
        resolve(res.headers['mediad-version'] !== undefined || res.statusCode === 200);
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
  });
}

async function checkPort(config: Config): Promise<InstallCheck> {
  const free = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    const srv = net.createServer();
    srv.once('error', (err) => resolve(err));
    srv.listen(config.port, config.host, () => srv.close(() => resolve(null)));
  });
  const where = `${config.host}:${config.port}`;
  if (!free) return ok('port', `${where} is free`);
  if (free.code === 'EADDRINUSE' && (await mediadAnswers(config.port)))
    return ok('port', `${where} is taken by a mediad that is running`);
  return problem(
    'port',
    explainStartupError(Object.assign(free, { syscall: 'listen' }), config) ?? `${where}: ${free.message}`,
  );
}

/** The encoders the kinds use (media/video-args.ts, audio-args.ts, storyboard.ts) and what needs each. */
const ENCODERS: [string, string][] = [
  ['libx264', 'video h264'],
  ['libx265', 'video h265'],
  ['libvpx-vp9', 'video vp9 (webm)'],
  ['libsvtav1', 'video av1'],
  ['aac', 'audio aac, video mp4 sound'],
  ['libopus', 'audio ogg/opus, webm sound'],
  ['libmp3lame', 'audio mp3'],
  ['flac', 'audio flac'],
  ['libwebp', 'webp storyboards'],
  ['mjpeg', 'jpeg storyboards'],
];

async function checkFfmpeg(config: Config): Promise<InstallCheck[]> {
  const run = await runTool(config.ffmpegPath, ['-hide_banner', '-encoders']);
  if (!run.found)
    return [
      problem(
        'ffmpeg',
        `${config.ffmpegPath} not found: install FFmpeg (apt-get install -y ffmpeg) or set MEDIAD_FFMPEG_PATH`,
      ),
    ];
  const has = (name: string) => new RegExp(`^\\s*[VAS][A-Z.]{5}\\s+${name}\\s`, 'm').test(run.output);
  const missing = ENCODERS.filter(([name]) => !has(name));
  const scdet = await ffmpegHasFilter('scdet');
  const out = [
    missing.length === 0
      ? ok('ffmpeg encoders', ENCODERS.map(([n]) => n).join(', '))
      : warn(
          'ffmpeg encoders',
          `missing ${missing.map(([n, what]) => `${n} (${what})`).join(', ')}: those options fail; Debian's ffmpeg package has them all`,
        ),
  ];
  out.push(scdet ? ok('ffmpeg filters', 'scdet') : warn('ffmpeg filters', 'no scdet: chapters find no scene cuts'));
  return out;
}

export async function installChecks(config: Config): Promise<InstallCheck[]> {
  const [dataDir, database, tls, port, ffmpeg] = await Promise.all([
    checkDataDir(config),
    checkDatabase(config),
    checkTls(config),
    checkPort(config),
    checkFfmpeg(config),
  ]);
  return [checkNode(), ...dataDir, database, ...tls, port, ...ffmpeg];
}
