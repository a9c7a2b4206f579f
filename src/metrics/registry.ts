import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { TasksTable } from '../db/schema.js';

// One registry per process (module scope): the worker pool, the webhook deliverer and the image
// URLs observe into it and GET /metrics serialises it (with http-requests.ts' series). No collectDefaultMetrics: its
// event-loop and GC observers cost on every process; four process gauges suffice.
export const registry = new Registry();

const taskDuration = new Histogram({
  name: 'mediad_task_duration_seconds',
  help: 'Run time of one task attempt, by kind and how it ended.',
  labelNames: ['kind', 'status'] as const,
  registers: [registry],
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
});
const tasksTotal = new Counter({
  name: 'mediad_tasks_total',
  help: 'Task attempts finished, by kind and how they ended: completed, failed, retrying, cancelled (or lease lost).',
  labelNames: ['kind', 'status'] as const,
  registers: [registry],
});
const queueDepth = new Gauge({
  name: 'mediad_queue_depth',
  help: 'Tasks not finished, by status (read from the database at scrape time).',
  labelNames: ['status'] as const,
  registers: [registry],
});
const webhookDeliveries = new Counter({
  name: 'mediad_webhook_deliveries_total',
  help: 'Webhook delivery attempts, by outcome (delivered, retrying, failed).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

const requestLogDropped = new Counter({
  name: 'mediad_request_log_dropped_total',
  help: 'Request log rows dropped: the buffer was full (the database fell behind) or a batch insert failed.',
  registers: [registry],
});

/** `n` request log rows were not recorded (services/operations/recorder.ts). */
export function countRequestLogDropped(n: number): void {
  requestLogDropped.inc(n);
}

const startSeconds = Math.round(Date.now() / 1000 - process.uptime());
new Gauge({
  name: 'process_start_time_seconds',
  help: 'Start time of the process since the Unix epoch in seconds.',
  registers: [registry],
  collect() {
    this.set(startSeconds);
  },
});
new Gauge({
  name: 'process_resident_memory_bytes',
  help: 'Resident memory size in bytes.',
  registers: [registry],
  collect() {
    this.set(process.memoryUsage.rss());
  },
});
new Gauge({
  name: 'nodejs_heap_used_bytes',
  help: 'V8 heap in use, in bytes.',
  registers: [registry],
  collect() {
    this.set(process.memoryUsage().heapUsed);
  },
});
new Counter({
  name: 'process_cpu_seconds_total',
  help: 'User and system CPU time spent in seconds.',
  registers: [registry],
  collect() {
    const u = process.cpuUsage();
    this.reset();
    this.inc((u.user + u.system) / 1e6);
  },
});

export type TaskOutcome = 'completed' | 'failed' | 'retrying' | 'cancelled';

/** One attempt of `task` ended; it was claimed at `task.updated` (set by the claim). */
export function observeTask(task: Pick<TasksTable, 'kind' | 'updated'>, status: TaskOutcome, now: Date): void {
  const seconds = Math.max(0, (now.getTime() - Date.parse(task.updated)) / 1000);
  taskDuration.observe({ kind: task.kind, status }, seconds);
  tasksTotal.inc({ kind: task.kind, status });
}

const taskPhase = new Histogram({
  name: 'mediad_task_phase_seconds',
  help: 'Time of each phase of a completed task attempt (claim, setup, input, run, store, commit, cleanup), by kind.',
  labelNames: ['kind', 'phase'] as const,
  registers: [registry],
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30, 300],
});

/** The phases of one completed attempt, in milliseconds (workers/timeline.ts). */
export function observeTaskPhases(kind: string, phases: Partial<Record<string, number>>): void {
  for (const [phase, ms] of Object.entries(phases)) if (ms !== undefined) taskPhase.observe({ kind, phase }, ms / 1000);
}

/** `status` is the delivery row's new status: pending means another attempt is scheduled. */
export function countWebhookDelivery(status: 'delivered' | 'pending' | 'failed'): void {
  webhookDeliveries.inc({ outcome: status === 'pending' ? 'retrying' : status });
}

const QUEUE_STATUSES = ['pending', 'processing', 'waiting'] as const;

export function setQueueDepth(rows: { status: string; n: number }[]): void {
  for (const s of QUEUE_STATUSES) queueDepth.set({ status: s }, rows.find((r) => r.status === s)?.n ?? 0);
}

export { QUEUE_STATUSES };

// Image URLs (issue 24): how each /img request ended.
export type ImageUrlResultLabel =
  'hit' | 'miss' | 'coalesced' | 'not_modified' | 'rejected' | 'rate_limited' | 'failed';
const imageUrlResults = new Counter({
  name: 'mediad_image_url_results_total',
  help: 'Image URL requests, by result: hit (cached), miss (computed), coalesced (waited for an identical miss), not_modified, rejected (bad signature or options), rate_limited, failed.',
  labelNames: ['result'] as const,
  registers: [registry],
});

export function countImageUrlResult(result: ImageUrlResultLabel): void {
  imageUrlResults.inc({ result });
}
