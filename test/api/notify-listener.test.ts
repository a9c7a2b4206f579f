import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import pg from 'pg';
import { pino } from 'pino';
import { createAdvisoryLocker } from '../../src/db/advisory-locker.js';
import { listenForWork } from '../../src/db/notify.js';
import { EVENTS_READY, signals, TASK_READY } from '../../src/signals.js';

// The PostgreSQL notification listeners (db/notify.ts in every process, the tus uploads' lock in
// db/advisory-locker.ts) let go of their
// connection whenever it is closed, even while it is still connecting: a short CLI command on
// PostgreSQL (`mediad blobs sweep`) closes its runtime a few milliseconds after opening it, and a
// connection finished after the close kept the command from exiting (CI, once in two runs).

const URL_ = process.env.MEDIAD_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function reachable(): Promise<boolean> {
  const c = new pg.Client({ connectionString: URL_ });
  try {
    await c.connect();
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** The sockets this process holds open (Node's own count of its active handles). */
const sockets = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;

/** Waits until the process holds no more sockets than `before`; how many are left. */
async function settled(before: number): Promise<number> {
  let left = sockets() - before;
  for (let i = 0; i < 100 && left > 0; i++) {
    await sleep(20);
    left = sockets() - before;
  }
  return left;
}

describe('the notification listeners', async () => {
  const up = await reachable();
  it(
    'closed at any point of its connecting, holds no connection after',
    { skip: !up && 'PostgreSQL is not reachable' },
    async () => {
      const before = sockets();
      const log = pino({ level: 'silent' });
      // Closed after 0…24 ms: before the TCP connection, during its start-up, during its LISTENs, after.
      await Promise.all(
        Array.from({ length: 25 }, async (_, ms) => {
          const listener = listenForWork(URL_, log);
          await sleep(ms);
          await listener.close();
        }),
      );
      const left = await settled(before);
      assert.equal(left, 0, `${left} connection(s) left open after close()`);
    },
  );

  it(
    'the upload lock: closed while its first lock starts listening, holds no connection after',
    { skip: !up && 'PostgreSQL is not reachable' },
    async () => {
      const before = sockets();
      await Promise.all(
        Array.from({ length: 25 }, async (_, ms) => {
          const locker = createAdvisoryLocker(URL_);
          const lock = locker.newLock(`upl_closing${ms}`);
          // Refused once closed (or taken just before): either way nothing may stay open.
          const taken = lock
            .lock(new AbortController().signal, async () => {})
            .then(
              () => true,
              () => false,
            );
          await sleep(ms);
          const closing = locker.close();
          if (await taken) await lock.unlock();
          await closing;
        }),
      );
      const left = await settled(before);
      assert.equal(left, 0, `${left} connection(s) left open after close()`);
    },
  );

  // A `mediad worker` listens for tasks and webhook deliveries only (server.ts): the events' NOTIFY,
  // sent by every task's completion, would wake it for nothing.
  it(
    'listens on the channels of the signals asked for, and on no other',
    { skip: !up && 'PostgreSQL is not reachable' },
    async () => {
      const heard: string[] = [];
      const onTask = () => heard.push(TASK_READY);
      const onEvents = () => heard.push(EVENTS_READY);
      signals.on(TASK_READY, onTask);
      signals.on(EVENTS_READY, onEvents);
      const listener = listenForWork(URL_, pino({ level: 'silent' }), [TASK_READY]);
      const sender = new pg.Client({ connectionString: URL_ });
      try {
        await sender.connect();
        const heardTask = async () => {
          for (let i = 0; i < 250 && !heard.includes(TASK_READY); i++) await sleep(20);
          return heard.includes(TASK_READY);
        };
        // Until its LISTEN is in place, a notification may go unheard: sent again until one is.
        for (let i = 0; i < 50 && !heard.includes(TASK_READY); i++) {
          await sender.query(`select pg_notify('mediad_tasks', '')`);
          await sleep(20);
        }
        assert.ok(await heardTask(), 'the tasks channel is listened to');
        heard.length = 0;
        // One sender's notifications arrive in order: the events one would come before the marker.
        await sender.query(`select pg_notify('mediad_events', '')`);
        await sender.query(`select pg_notify('mediad_tasks', '')`);
        assert.ok(await heardTask(), 'the marker was heard');
        assert.ok(!heard.includes(EVENTS_READY), `the events channel is not listened to: ${heard.join(', ')}`);
      } finally {
        signals.off(TASK_READY, onTask);
        signals.off(EVENTS_READY, onEvents);
        await sender.end().catch(() => undefined);
        await listener.close();
      }
    },
  );
});
