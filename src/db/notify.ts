import { sql, type RawBuilder } from 'kysely';
import type pgModule from 'pg';
import { pg } from './pg-module.js';
import type { Logger } from 'pino';
import { signals, EVENTS_READY, TASK_READY, WEBHOOK_READY, type WorkSignal } from '../signals.js';

// Cross-process wake-ups on PostgreSQL. A NOTIFY issued inside a transaction is delivered
// when (and only if) it commits, so writers notify next to the rows they insert (through
// db/transact.ts's wake), and every process listens on one connection and turns notifications
// into its in-process signals. SQLite has no such thing: there, other processes find work by polling.

const CHANNELS = { mediad_tasks: TASK_READY, mediad_events: EVENTS_READY, mediad_webhooks: WEBHOOK_READY } as const;
type Channel = keyof typeof CHANNELS;
const CHANNEL_OF: Record<WorkSignal, Channel> = {
  [TASK_READY]: 'mediad_tasks',
  [EVENTS_READY]: 'mediad_events',
  [WEBHOOK_READY]: 'mediad_webhooks',
};

/** The pg_notify call that wakes `signal`'s loops in the other processes (an expression to select). */
export function notifyQuery(signal: WorkSignal): RawBuilder<unknown> {
  return sql`pg_notify(${CHANNEL_OF[signal]}, '')`;
}

/**
 * Listens on the channels of `wanted` until closed; reconnects with a pause if the connection
 * drops. Each notification on a channel listened to wakes the process (and PostgreSQL signals
 * its backend to send it), so a process listens only for the loops it wakes with them.
 */
export function listenForWork(
  url: string,
  log: Logger,
  wanted: readonly WorkSignal[] = Object.values(CHANNELS),
): { close(): Promise<void> } {
  const channels = wanted.map((s) => CHANNEL_OF[s]);
  // The connection, from the moment it is made: close() may come while it is still connecting (a
  // short CLI command), and a connection left open would keep the process from exiting.
  let client: pgModule.Client | null = null;
  let closed = false;
  const connect = async () => {
    while (!closed) {
      const c = new (pg().Client)({ connectionString: url });
      client = c;
      try {
        await c.connect();
        c.on('notification', (msg) => signals.emit(CHANNELS[msg.channel as Channel] ?? TASK_READY));
        c.on('error', (err) => {
          log.warn({ err }, 'notification connection lost; reconnecting');
          void c.end().catch(() => undefined);
          if (client === c) client = null;
          if (!closed) setTimeout(() => void connect(), 1000);
        });
        for (const ch of channels) await c.query(`LISTEN ${ch}`);
        return;
      } catch (err) {
        if (client === c) client = null;
        await c.end().catch(() => undefined);
        if (closed) return;
        log.warn({ err }, 'could not listen for notifications; retrying');
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  };
  void connect();
  return {
    async close() {
      closed = true;
      await client?.end().catch(() => undefined);
    },
  };
}
