import { EventEmitter } from 'node:events';

// In-process wake-ups: a task committed by the API wakes an idle worker at once, and a
// cancellation reaches the worker running it. Other processes find work by polling
// (and, on PostgreSQL, by LISTEN/NOTIFY once that lands).
export const taskSignals = new EventEmitter();
taskSignals.setMaxListeners(0);

export const TASK_READY = 'ready';
export const TASK_CANCELLED = 'cancelled';
export const WEBHOOK_READY = 'webhook';
export const EVENTS_READY = 'events';
