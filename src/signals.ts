import { EventEmitter } from 'node:events';

// In-process wake-ups. A commit that creates work (a task, an event, a webhook delivery) wakes
// this process's idle loop for it at once (db/transact.ts fires them once the transaction has
// committed); a cancellation reaches the worker running the task. Other processes learn of the
// same commits through PostgreSQL's LISTEN/NOTIFY (db/notify.ts), or by polling on SQLite.
export const signals = new EventEmitter();
signals.setMaxListeners(0);

/** New or due tasks. */
export const TASK_READY = 'ready';
/** A task was cancelled; the listener gets its id. */
export const TASK_CANCELLED = 'cancelled';
/** Webhook deliveries to send. */
export const WEBHOOK_READY = 'webhook';
/** Deleted projects to purge (in this process; others find the work at their next poll). */
export const HOUSEKEEPING = 'housekeeping';
/** Events to dispatch. */
export const EVENTS_READY = 'events';

/** The signals that announce work: each has a NOTIFY channel too. */
export type WorkSignal = typeof TASK_READY | typeof WEBHOOK_READY | typeof EVENTS_READY;
