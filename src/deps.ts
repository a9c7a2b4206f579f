import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import type { Db } from './db/connect.js';
import type { ReaderThread } from './db/reader.js';
import type { BlobStore } from './storage/blob-store.js';
import type { GuardedClient } from './net/guarded-fetch.js';
import type { Sealer } from './secrets/sealer.js';

/** Side effects the services use, each behind a small interface so tests can swap real ones. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** The guarded outbound client (src/net): every fetch of a user-given URL goes through it. */
export type Outbound = Pick<GuardedClient, 'download' | 'request'>;

export interface Deps {
  config: Config;
  db: Db;
  /** The SQLite reader thread of the hot reads (db/hot-reads.ts); null on PostgreSQL and in memory. */
  reader: ReaderThread | null;
  blobs: BlobStore;
  clock: Clock;
  outbound: Outbound;
  log: Logger;
  /** Scratch space on the same filesystem as the disk blob store, so finished files are renamed, not copied. */
  tmpDir: string;
  /** Seals and reveals secret options (http header values) with the key kept outside the database. */
  secrets: Sealer;
  /** Shared state across processes (rate limits), when MEDIAD_REDIS_URL is set. */
  redis?: Redis;
}

export const iso = (d: Date): string => d.toISOString();
