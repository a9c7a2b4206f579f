import { createHash } from 'node:crypto';
import { once } from 'node:events';
import pg from 'pg';
import { ERRORS, type Lock, type Locker, type RequestRelease } from '@tus/utils';

// A tus Locker over PostgreSQL session advisory locks, so several mediad processes behind a load
// balancer serve one upload's successive PATCHes safely: whoever holds an upload's lock holds a
// connection with pg_advisory_lock on a 64-bit key derived from the upload id. A request that
// wants a held lock asks the holder to let go (tus's "request release", which ends a stalled
// PATCH early) — in this process directly, in another one through NOTIFY — and retries until
// it gets the lock or gives up (ERR_LOCK_TIMEOUT → the client retries).

const CHANNEL = 'mediad_upload_release';
const RETRY_MS = 50;

/** The 64-bit advisory key of an upload id (signed, as PostgreSQL's bigint); `namespace` keeps other users' ids apart. */
export function advisoryKey(id: string, namespace = 'mediad-upload'): string {
  return createHash('sha256').update(`${namespace}:${id}`).digest().readBigInt64BE(0).toString();
}

export interface AdvisoryLocker extends Locker {
  close(): Promise<void>;
}

export function createAdvisoryLocker(
  url: string,
  opts: { acquireTimeoutMs?: number; poolSize?: number; namespace?: string; channel?: string } = {},
) {
  const pool = new pg.Pool({ connectionString: url, max: opts.poolSize ?? 20 });
  pool.on('error', () => {}); // an idle client's broken connection: the next checkout opens a new one
  const timeoutMs = opts.acquireTimeoutMs ?? 30_000;
  const channel = opts.channel ?? CHANNEL;
  /** Holders in this process, by upload id: their release callbacks. */
  const held = new Map<string, RequestRelease>();
  let listener: pg.Client | null = null;
  let listening: Promise<void> | null = null;

  const closing = new AbortController();
  /** Rejects once the locker is closed: a connect that close() ended does not always settle. */
  const closed = once(closing.signal, 'abort').then(() => {
    throw ERRORS.ERR_LOCK_TIMEOUT;
  });
  closed.catch(() => {});
  const listen = () =>
    (listening ??= (async () => {
      if (closing.signal.aborted) throw ERRORS.ERR_LOCK_TIMEOUT;
      // Kept from the moment it is made: a close() while it connects ends it too (else the
      // connection would keep the process from exiting).
      const client = new pg.Client({ connectionString: url });
      listener = client;
      client.on('error', () => {
        listener = null;
        listening = null;
      });
      try {
        await Promise.race([client.connect(), closed]);
        client.on('notification', (msg) => {
          const release = msg.payload ? held.get(msg.payload) : undefined;
          if (release) void release();
        });
        await client.query(`LISTEN ${channel}`);
      } catch (err) {
        // Not kept: the next lock tries to listen again.
        if (listener === client) listener = null;
        listening = null;
        await client.end().catch(() => {});
        throw err;
      }
    })());

  const locker: AdvisoryLocker = {
    newLock(id: string): Lock {
      const key = advisoryKey(id, opts.namespace);
      let client: pg.PoolClient | null = null;
      return {
        async lock(signal: AbortSignal, release: RequestRelease) {
          await listen();
          const conn = await pool.connect();
          const deadline = Date.now() + timeoutMs;
          try {
            let asked = false;
            for (;;) {
              const { rows } = await conn.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [
                key,
              ]);
              if (rows[0]?.ok) break;
              if (signal.aborted || Date.now() > deadline) throw ERRORS.ERR_LOCK_TIMEOUT;
              if (!asked) {
                asked = true;
                const local = held.get(id);
                if (local) await local();
                else await conn.query('SELECT pg_notify($1, $2)', [channel, id]);
              }
              await new Promise((r) => setTimeout(r, RETRY_MS));
            }
          } catch (err) {
            conn.release();
            throw err;
          }
          client = conn;
          held.set(id, release);
        },
        async unlock() {
          const conn = client;
          client = null;
          held.delete(id);
          if (!conn) return;
          try {
            await conn.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
            conn.release();
          } catch (err) {
            conn.release(err instanceof Error ? err : true); // a broken connection drops its locks with it
          }
        },
      };
    },
    async close() {
      closing.abort();
      await listener?.end().catch(() => {});
      await pool.end();
    },
  };
  return locker;
}
