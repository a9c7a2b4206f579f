import { SqliteAdapter, type Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import type { Database } from '../db/schema.js';
import type { EventRow } from '../db/queries/events.js';
import { notify } from '../db/notify.js';
import { taskSignals, EVENTS_READY, TASK_READY, WEBHOOK_READY } from '../queue/signal.js';

/** Turns one event into work (automation runs, webhook deliveries) inside the dispatch transaction. */
export type EventConsumer = (deps: Deps, trx: Kysely<Database>, event: EventRow) => Promise<{ tasks: number; deliveries: number }>;

const BATCH = 50;

/**
 * Reads the outbox in order and fans each event out to its consumers. The rows they
 * create and the event's `dispatched` flag commit together, so an event is fanned out
 * exactly once even when a process dies mid-way (consumers also dedupe by event id).
 */
export class EventDispatcher {
  private stopped = false;
  private running = false;
  private again = false;
  private timer?: NodeJS.Timeout;
  private readonly onReady = () => void this.dispatch();

  constructor(private readonly deps: Deps, private readonly consumers: EventConsumer[], private readonly pollMs: number) {}

  start(): void {
    taskSignals.on(EVENTS_READY, this.onReady);
    const tick = async () => {
      await this.dispatch();
      if (!this.stopped) this.timer = setTimeout(tick, this.pollMs);
    };
    void tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    taskSignals.off(EVENTS_READY, this.onReady);
    while (this.running) await new Promise((r) => setTimeout(r, 10));
  }

  /** Dispatches until the outbox is empty; a wake-up during a run causes one more pass. */
  async dispatch(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      do {
        this.again = false;
        while (!this.stopped && (await this.batch()) === BATCH);
      } while (this.again && !this.stopped);
    } catch (err) {
      this.deps.log.error({ err }, 'event dispatch failed');
    } finally {
      this.running = false;
    }
  }

  private async batch(): Promise<number> {
    const sqlite = this.deps.db.getExecutor().adapter instanceof SqliteAdapter;
    let tasks = 0;
    let deliveries = 0;
    const count = await this.deps.db.transaction().execute(async (trx) => {
      let q = trx.selectFrom('events').select(['seq', 'id', 'project_id', 'type', 'data', 'created', 'chain']).where('dispatched', '=', 0).orderBy('seq').limit(BATCH);
      if (!sqlite) q = q.forUpdate().skipLocked();
      const rows = await q.execute();
      for (const row of rows) {
        for (const consume of this.consumers) {
          const made = await consume(this.deps, trx, row);
          tasks += made.tasks;
          deliveries += made.deliveries;
        }
      }
      if (rows.length > 0) await trx.updateTable('events').set({ dispatched: 1 }).where('seq', 'in', rows.map((r) => r.seq)).execute();
      if (deliveries > 0) await notify(trx, 'mediad_webhooks');
      return rows.length;
    });
    if (tasks > 0) taskSignals.emit(TASK_READY);
    if (deliveries > 0) taskSignals.emit(WEBHOOK_READY);
    return count;
  }
}

/**
 * Services call this after a transaction that recorded events has committed, so an idle
 * dispatcher reacts at once instead of at its next poll.
 */
export function eventsRecorded(): void {
  taskSignals.emit(EVENTS_READY);
}
