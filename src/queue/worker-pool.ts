import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { randomBase62 } from '../ids.js';
import { kindEntry } from '../kinds/registry.js';
import type { KindInput, TaskContext, TaskTarget } from '../kinds/types.js';
import type { TasksTable } from '../db/schema.js';
import { parseChain } from '../db/queries/events.js';
import { storeOutputFiles } from '../services/files.js';
import { fileSummary } from '../services/task-representation.js';
import { claimTask, expiredLeases, heartbeat, releaseTask } from './claim.js';
import { completeTask, failTask, LeaseLostError } from './finish.js';
import { resolveInput } from './input.js';
import { backoffDelay, classifyFailure } from './retry.js';
import { taskSignals, TASK_CANCELLED, TASK_READY, WEBHOOK_READY } from './signal.js';
import { eventsRecorded } from '../events/dispatcher.js';
import { observeTask } from '../metrics/registry.js';

const PROGRESS_WRITE_MS = 500;

export interface PoolOptions {
  concurrency: number;
  leaseMs: number;
  /** How often to look for work nobody signalled (other processes' tasks, retries coming due). */
  pollMs: number;
  /** On shutdown, how long running tasks may take to finish before they are put back. */
  drainMs: number;
}

/** Why a running task was stopped: its abort reason tells the pool what to do with the row. */
class StopReason extends Error {
  constructor(readonly kind: 'cancelled' | 'lease_lost' | 'shutdown') {
    super(kind);
  }
}

/**
 * Runs tasks from the tasks table. Each claim is a lease renewed by heartbeats; a task whose
 * heartbeat fails (cancelled, or taken over after an expired lease) is aborted, which kills
 * its FFmpeg process group. An expired lease elsewhere is put back for another attempt.
 */
export class WorkerPool {
  readonly owner = `${os.hostname()}:${process.pid}:${randomBase62(6)}`;
  private readonly running = new Map<string, AbortController>();
  private stopped = false;
  private filling = false;
  private timer?: NodeJS.Timeout;
  private readonly onReady = () => void this.fill();
  private readonly onCancel = (id: string) => this.running.get(id)?.abort(new StopReason('cancelled'));

  constructor(private readonly deps: Deps, private readonly opts: PoolOptions) {}

  start(): void {
    taskSignals.on(TASK_READY, this.onReady);
    taskSignals.on(TASK_CANCELLED, this.onCancel);
    const tick = async () => {
      await this.recoverExpired().catch((err: unknown) => this.deps.log.warn({ err }, 'lease recovery failed'));
      await this.fill();
      if (!this.stopped) this.timer = setTimeout(tick, this.opts.pollMs);
    };
    void tick();
  }

  /** Stops claiming; running tasks get `drainMs` to finish, then are aborted and released for another worker. */
  async stop(graceMs = this.opts.drainMs): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    taskSignals.off(TASK_READY, this.onReady);
    taskSignals.off(TASK_CANCELLED, this.onCancel);
    const deadline = Date.now() + graceMs;
    while (this.running.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const c of this.running.values()) c.abort(new StopReason('shutdown'));
    while (this.running.size > 0) await new Promise((r) => setTimeout(r, 20));
  }

  get busy(): number {
    return this.running.size;
  }

  private async fill(): Promise<void> {
    if (this.filling || this.stopped) return;
    this.filling = true;
    try {
      while (!this.stopped && this.running.size < this.opts.concurrency) {
        const task = await claimTask(this.deps.db, this.owner, this.opts.leaseMs, this.deps.clock.now());
        if (!task) break;
        const controller = new AbortController();
        this.running.set(task.id, controller);
        void this.run(task, controller).finally(() => {
          this.running.delete(task.id);
          void this.fill();
        });
      }
    } catch (err) {
      this.deps.log.error({ err }, 'claiming a task failed');
    } finally {
      this.filling = false;
    }
  }

  private async recoverExpired(): Promise<void> {
    const now = this.deps.clock.now();
    for (const task of await expiredLeases(this.deps.db, now)) {
      if (task.attempts >= task.max_attempts) {
        await failTask(this.deps, task, { code: 'worker_lost', message: `the worker running this task stopped responding ${task.attempts} times`, transient: false });
      } else if (await releaseTask(this.deps.db, task, now, now)) {
        this.deps.log.warn({ task: task.id, owner: task.lease_owner }, 'lease expired: task put back');
      }
    }
  }

  private async run(task: TasksTable, controller: AbortController): Promise<void> {
    const { deps } = this;
    const entry = kindEntry(task.kind);
    const log = deps.log.child({ task: task.id, kind: task.kind, attempt: task.attempts });
    let progress: number | undefined;
    let progressWritten = 0;
    const beat = setInterval(() => {
      heartbeat(deps.db, task.id, this.owner, this.opts.leaseMs, deps.clock.now(), progress)
        .then((ours) => { if (!ours) controller.abort(new StopReason('lease_lost')); })
        .catch((err: unknown) => log.warn({ err }, 'heartbeat failed'));
    }, Math.max(50, Math.floor(this.opts.leaseMs / 3)));
    const timeout = setTimeout(() => controller.abort(Object.assign(new Error('task timeout'), { reason: 'timeout' })), entry?.processor.policy.timeoutMs ?? 3600_000);
    const workDir = await fs.mkdtemp(path.join(deps.tmpDir, `task-${task.id}-`));
    try {
      if (!entry) throw new AppError('kind_not_supported', `kind "${task.kind}" is not implemented in this mediad yet`);
      const ctx: TaskContext = {
        deps, task, options: JSON.parse(task.options) as Record<string, unknown>, target: JSON.parse(task.target) as TaskTarget,
        signal: controller.signal, workDir,
        progress: (p) => {
          progress = Math.max(progress ?? 0, Math.min(99, Math.round(p)));
          // Stored at most twice a second, apart from the (slower) heartbeat, so clients see it move.
          if (Date.now() - progressWritten < PROGRESS_WRITE_MS) return;
          progressWritten = Date.now();
          void heartbeat(deps.db, task.id, this.owner, this.opts.leaseMs, deps.clock.now(), progress).catch(() => undefined);
        },
      };
      const input: KindInput | null = entry.processor.needsInputFile ? await resolveInput(deps, task, workDir, controller.signal) : null;
      if (input) entry.processor.check?.(ctx.options, input);
      const result = await entry.processor.run(ctx, input);
      controller.signal.throwIfAborted();
      if ('commit' in result) await result.commit();
      else if ('output' in result) {
        await deps.db.transaction().execute((trx) => completeTask(deps, trx, task, null, result.output, result.results));
      } else {
        const folder = ctx.target.folder ?? input?.file.folder ?? '';
        await storeOutputFiles(deps, { projectId: task.project_id, chain: parseChain(task.chain) }, input!.file.media_id, result.files.map((f, i) => ({
          path: f.path, facts: f, probe: f.probe, folder, filename: i === 0 ? ctx.target.filename ?? f.filename : f.filename, ref: f.ref !== undefined ? f.ref : i === 0 ? ctx.target.ref ?? null : null,
        })), (trx, files) => completeTask(deps, trx, task, files[0]!.id, fileSummary(files[0]!)));
      }
      log.info({ ms: Date.now() - Date.parse(task.started ?? task.created) }, 'task completed');
      observeTask(task, 'completed', deps.clock.now()); // metrics
    } catch (err) {
      await this.handleFailure(task, controller, err, log);
    } finally {
      clearInterval(beat);
      clearTimeout(timeout);
      await fs.rm(workDir, { recursive: true, force: true });
      if (task.webhook_url) taskSignals.emit(WEBHOOK_READY);
      eventsRecorded();
    }
  }

  private async handleFailure(task: TasksTable, controller: AbortController, err: unknown, log: Deps['log']): Promise<void> {
    const reason: unknown = controller.signal.aborted ? controller.signal.reason : undefined;
    if (err instanceof LeaseLostError || (reason instanceof StopReason && reason.kind !== 'shutdown')) {
      log.info({ reason: reason instanceof StopReason ? reason.kind : 'lease_lost' }, 'task stopped');
      observeTask(task, 'cancelled', this.deps.clock.now()); // metrics
      return;
    }
    const now = this.deps.clock.now();
    if (reason instanceof StopReason) {
      await releaseTask(this.deps.db, task, now, now); // shutdown: another worker picks it up
      return;
    }
    const failure = classifyFailure(reason ?? err);
    const entry = kindEntry(task.kind);
    if (failure.code === 'internal_error') log.error({ err }, 'task failed');
    if (failure.transient && entry && task.attempts < task.max_attempts) {
      const delay = backoffDelay(entry.processor.policy, task.attempts);
      await releaseTask(this.deps.db, task, new Date(now.getTime() + delay), now, JSON.stringify({ code: failure.code, message: failure.message }));
      log.warn({ code: failure.code, retryInMs: delay }, 'task failed; will retry');
      observeTask(task, 'retrying', now); // metrics
    } else {
      await failTask(this.deps, task, failure);
      log.info({ code: failure.code }, 'task failed');
      observeTask(task, 'failed', now); // metrics
    }
  }
}
