import fs from 'node:fs/promises';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import { systemClock, type Deps } from './deps.js';
import { migrate, openDatabase } from './db/connect.js';
import { listenForWork } from './db/notify.js';
import { setMediaBinaries, setProcessingNice } from './media/index.js';
import { createGuardedClient } from './net/index.js';
import { createDiskBlobStore, type DiskBlobStore, type S3BlobStore } from './storage/index.js';
import { sweepExpiredKeys } from './services/idempotency.js';
import type { WorkSignal } from './signals.js';
import { isAlive } from './process-liveness.js';
import { sweepBlobJournal } from './services/media/blob-journal.js';
import { sweepAbandonedPackages } from './services/media/growing-package.js';
import { sealStoredSecrets } from './services/media/stored-secrets.js';
import { dataDirSecretKey } from './secrets/key-file.js';
import { createSealer } from './secrets/sealer.js';
import { USER_AGENT } from './package-info.js';
import { prettyStream } from './log-format.js';

export interface Runtime {
  deps: Deps;
  close(): Promise<void>;
}

export function createLogger(config: Pick<Config, 'logLevel'> & Partial<Pick<Config, 'logFormat'>>): Logger {
  const options = { level: config.logLevel, base: { service: 'mediad' }, timestamp: pino.stdTimeFunctions.isoTime };
  // Readable lines on a terminal, JSON lines into files and pipes (log collectors parse those).
  const pretty = config.logFormat === 'pretty' || (config.logFormat === 'auto' && process.stdout.isTTY === true);
  return pretty ? pino(options, prettyStream(process.stdout)) : pino(options);
}

/** Opens the database (migrating it), the blob store and the outbound client: everything a role needs. */
export async function createRuntime(
  config: Config,
  log: Logger = createLogger(config),
  /** The wake-ups this process's loops take from other processes (PostgreSQL's NOTIFY channels); all by default. */
  wakeSignals?: readonly WorkSignal[],
): Promise<Runtime> {
  setMediaBinaries({ ffmpeg: config.ffmpegPath, ffprobe: config.ffprobePath });
  setProcessingNice(config.processingNice);
  const database = openDatabase(config.database);
  const { db, reader } = database;
  const applied = await migrate(db);
  if (applied.length > 0) log.info({ migrations: applied }, 'database migrated');

  const blobs = await createBlobStore(config);
  await blobs.checkWritable();
  // Leftovers of writes interrupted by a crash are never referenced: drop them. (S3 has no temp
  // objects: an interrupted multipart upload is aborted, or expired by a bucket lifecycle rule.)
  if ('sweepTemp' in blobs)
    await blobs.sweepTemp(60 * 60 * 1000).catch((err: unknown) => log.warn({ err }, 'temp sweep failed'));
  const tmpDir = await prepareScratch(path.join(config.dataDir, 'tmp'));

  const outbound = createGuardedClient({
    ...config.fetch,
    maxBytes: config.limits.maxFileBytes,
    userAgent: USER_AGENT,
  });

  // Secret options are sealed with a key that is not in the database (secrets/sealer.ts).
  if (config.secretKeys.length === 0 && config.database.dialect === 'postgres')
    log.warn(
      'MEDIAD_SECRET_KEY is not set: this process seals http header values with its data dir secret.key; every mediad process of this database needs the same key (set MEDIAD_SECRET_KEY everywhere)',
    );
  const secrets = createSealer(
    config.secretKeys.length > 0 ? config.secretKeys : [await dataDirSecretKey(config.dataDir)],
  );

  const listener = config.database.dialect === 'postgres' ? listenForWork(config.database.url, log, wakeSignals) : null;
  // Rate limits across processes; ioredis is loaded only when Redis is configured.
  const redisUrl = config.redisUrl;
  const redis = redisUrl
    ? await import('./ratelimit/redis-client.js').then((r) => r.connectRedis(redisUrl, log))
    : undefined;
  const deps: Deps = {
    config,
    db,
    reader,
    blobs,
    clock: systemClock,
    outbound,
    log,
    tmpDir,
    secrets,
    ...(redis ? { redis } : {}),
  };
  // Header values stored in the clear by an earlier mediad are sealed (once).
  await sealStoredSecrets(deps);
  // Blobs a stopped process wrote or was deleting without its row's commit (blob-journal.ts).
  // Packages left processing by a stopped process go first: their rows would keep their blobs.
  const sweepBlobs = () =>
    sweepAbandonedPackages(deps)
      .then(() => sweepBlobJournal(deps))
      .catch((err: unknown) => log.warn({ err }, 'blob journal sweep failed'));
  await sweepBlobs();
  const sweeper = setInterval(
    () => {
      sweepExpiredKeys(deps).catch((err: unknown) => log.warn({ err }, 'idempotency sweep failed'));
      void sweepBlobs();
    },
    15 * 60 * 1000,
  );
  sweeper.unref();

  return {
    deps,
    async close() {
      clearInterval(sweeper);
      await listener?.close();
      await outbound.close();
      redis?.disconnect();
      await database.close();
      await fs.rm(tmpDir, { recursive: true, force: true });
    },
  };
}

/** The blob store of `config.storage`. The scratch dir (tmpDir) stays on local disk either way. */
async function createBlobStore(config: Config): Promise<DiskBlobStore | S3BlobStore> {
  const storage = config.storage;
  if (storage.kind === 'disk') return createDiskBlobStore(path.join(config.dataDir, 'blobs'));
  // Loaded only when used: the AWS SDK adds startup time that disk deployments need not pay.
  const { createS3BlobStore } = await import('./storage/s3-blob-store.js');
  return createS3BlobStore(storage);
}

/**
 * Each process gets its own scratch directory named by pid (serve and worker
 * processes share a data dir). Directories of processes that no longer run are
 * leftovers of a crash and are removed.
 */
async function prepareScratch(root: string): Promise<string> {
  await fs.mkdir(root, { recursive: true });
  for (const name of await fs.readdir(root)) {
    const pid = Number(name);
    if (Number.isInteger(pid) && pid !== process.pid && isAlive(pid)) continue;
    await killProcessesUsing(path.join(root, name));
    await fs.rm(path.join(root, name), { recursive: true, force: true });
  }
  const dir = path.join(root, String(process.pid));
  await fs.mkdir(dir, { recursive: true });
  return dir;
}

/**
 * FFmpeg runs in its own process group so a task can kill it cleanly; when the worker
 * itself is SIGKILLed that FFmpeg lives on, still writing into the dead worker's scratch
 * directory. Processes whose command line names that directory are those orphans (Linux /proc).
 */
async function killProcessesUsing(dir: string): Promise<void> {
  const entries = await fs.readdir('/proc').catch(() => [] as string[]);
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await fs.readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(`${dir}/`)) {
      try {
        process.kill(Number(entry), 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}
