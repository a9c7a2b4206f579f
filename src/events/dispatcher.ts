import { SqliteAdapter, sql, type Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import type { Database } from '../db/schema.js';
import { compiledTemplate } from '../db/compiled.js';
import { transact } from '../db/transact.js';
import { Poller } from '../poller.js';
import { EVENTS_READY } from '../signals.js';
import type { EventRow } from './record.js';

/** Turns one event into work (automation runs, webhook deliveries) inside the dispatch transaction; it wakes what it creates. */
export type EventConsumer = (deps: Deps, trx: Kysely<Database>, event: EventRow) => Promise<void>;

const BATCH = 50;
/**
 * Passes start at least this far apart. Every commit that records an event wakes the dispatch, and
 * a pass is a transaction of its own (on PostgreSQL six round trips for one event: begin, the
 * outbox read, the automations and endpoints of its project, the flag, commit); under a stream of
 * events a pass now takes those of several commits at once. An event that finds the dispatch idle
 * is dispatched at once.
 */
const PASS_GAP_MS = 10;

/**
 * A read a consumer makes for each event, made once per dispatch transaction (up to BATCH events
 * of a pass) and project: those events share their project's automations and endpoints.
 */
export function oncePerPass<T>(
  read: (trx: Kysely<Database>, projectId: string) => Promise<T>,
): (trx: Kysely<Database>, projectId: string) => Promise<T> {
  const passes = new WeakMap<Kysely<Database>, Map<string, Promise<T>>>();
  return (trx, projectId) => {
    let reads = passes.get(trx);
    if (!reads) passes.set(trx, (reads = new Map()));
    let r = reads.get(projectId);
    if (!r) reads.set(projectId, (r = read(trx, projectId)));
    return r;
  };
}

/** Events to dispatch, with the flag as a literal: events_undispatched holds only those (migration 021). */
const UNDISPATCHED = sql<boolean>`dispatched = 0`;

/** The outbox's next batch, compiled once (db/compiled.ts): the dispatcher reads it after every change. */
export const undispatched = compiledTemplate((db: Kysely<Database>) => {
  const q = db
    .selectFrom('events')
    .select(['seq', 'id', 'project_id', 'type', 'data', 'created', 'chain'])
    .where(UNDISPATCHED)
    .orderBy('seq')
    .limit(BATCH);
  return db.getExecutor().adapter instanceof SqliteAdapter ? q : q.forUpdate().skipLocked();
}, 0);

/** Whether the outbox holds an event to dispatch, compiled once: the read most passes end with. */
export const anyUndispatched = compiledTemplate(
  (db: Kysely<Database>) => db.selectFrom('events').select('seq').where(UNDISPATCHED).limit(1),
  0,
);

/**
 * Reads the outbox in order and fans each event out to its consumers. The rows they
 * create and the event's `dispatched` flag commit together, so an event is fanned out
 * exactly once even when a process dies mid-way (consumers also dedupe by event id).
 */
export class EventDispatcher {
  private readonly poller: Poller;
  /** When the last pass that dispatched something ended (performance.now()). */
  private lastPass = -Infinity;

  constructor(
    private readonly deps: Deps,
    private readonly consumers: EventConsumer[],
    pollMs: number,
    /** false: dispatch on the poll only (a `mediad worker` on PostgreSQL, where serve hears every NOTIFY). */
    wakeOnSignal = true,
  ) {
    this.poller = new Poller({
      signal: wakeOnSignal ? EVENTS_READY : null,
      pollMs,
      pass: () => this.dispatch(),
      onError: (err) => deps.log.error({ err }, 'event dispatch failed'),
    });
  }

  start(): void {
    this.poller.start();
  }

  stop(): Promise<void> {
    return this.poller.stop();
  }

  /** Dispatches until the outbox is empty. */
  private async dispatch(): Promise<void> {
    const wait = this.lastPass + PASS_GAP_MS - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    // Most passes find nothing (events of projects with no automation and no endpoint are recorded
    // dispatched, events/record.ts): a read outside a transaction says so, one statement where the
    // transaction is three (on SQLite it does not take the write lock). Once a pass: a batch after
    // a full one finds more events as a rule.
    if ((await this.deps.db.executeQuery(anyUndispatched(this.deps.db))).rows.length === 0) return;
    let dispatched = 0;
    let n = BATCH;
    while (n === BATCH && !this.poller.isStopped) {
      n = await this.batch();
      dispatched += n;
    }
    if (dispatched > 0) this.lastPass = performance.now();
  }

  private async batch(): Promise<number> {
    return transact(this.deps.db, async (trx) => {
      const { rows } = await trx.executeQuery(undispatched(trx));
      for (const row of rows) for (const consume of this.consumers) await consume(this.deps, trx, row);
      if (rows.length > 0)
        await trx
          .updateTable('events')
          .set({ dispatched: 1 })
          .where(
            'seq',
            'in',
            rows.map((r) => r.seq),
          )
          .execute();
      return rows.length;
    });
  }
}
