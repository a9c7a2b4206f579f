import os from 'node:os';
import type { Deps } from '../deps.js';
import { iso } from '../deps.js';
import type { TasksTable } from '../db/schema.js';
import { transact } from '../db/transact.js';
import { AppError } from '../errors.js';
import { randomBase62 } from '../ids.js';
import type { KindInput, RunContext, TaskSubject } from '../kinds/define.js';
import { kindEntry } from '../kinds/registry.js';
import { observeTask, observeTaskPhases } from '../metrics/registry.js';
import { Poller } from '../poller.js';
import { policyOf } from '../queue/policies.js';
import { classifyFailure, retryDelay } from '../queue/retry.js';
import {
  claim,
  expiredLeases,
  fail,
  heartbeat,
  LeaseLostError,
  release,
  type InputFileRow,
} from '../queue/task-state.js';
import { beatWorker, registerWorker, removeWorker, workerBeatMs, workerStaleMs } from '../queue/worker-registry.js';
import type { WorkersTable } from '../db/schema.js';
import { findFileRow } from '../services/media/files.js';
import { findMedia } from '../services/media/media.js';
import { toFileObject, toMediaObject } from '../shapes/files.js';
import { toTaskObject, type TaskTarget } from '../shapes/tasks.js';
import { signals, TASK_CANCELLED, TASK_READY } from '../signals.js';
import { advance } from '../workflows/runner.js';
import { AiEngines } from './ai-ports.js';
import { resolveInput } from './input.js';
import { runOptions } from '../services/media/secrets.js';
import { applyResult, packageWriterFor } from './outcome.js';
import { discardProcessingFile, type GrowingPackage } from '../services/media/growing-package.js';
import { ScratchDirs } from './scratch.js';
import { TaskTimeline } from './timeline.js';

const PROGRESS_WRITE_MS = 500;
/** Tasks that may be storing their outputs and committing, per slot of `concurrency`. */
const ENDING_PER_SLOT = 4;

/** The kind's own options: a task's `options` also show where its output goes (its target). */
function kindOptions(task: TasksTable): Record<string, unknown> {
  const {
    folder: _folder,
    filename: _filename,
    ref: _ref,
    ...options
  } = JSON.parse(task.options) as Record<string, unknown>;
  return options;
}

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
 * Runs tasks from the tasks table: claim, resolve the input, run the kind, store what it made and
 * end the task. Each claim is a lease renewed by heartbeats; a task whose heartbeat fails
 * (cancelled, or taken over after an expired lease) is aborted, which kills its FFmpeg process
 * group. An expired lease elsewhere is put back for another attempt.
 */
export class WorkerPool {
  readonly owner = `${os.hostname()}:${process.pid}:${randomBase62(6)}`;
  private readonly running = new Map<string, AbortController>();
  /**
   * Tasks of `running` whose kind is still at work (setup, input, run): what `concurrency` limits.
   * Storing the outputs and ending the task wait on fsyncs and the database, not on the cores, so
   * a task leaves its slot when its kind returns, and the next task's work overlaps its ending. At
   * most ENDING_PER_SLOT × `concurrency` more tasks may be ending at once (each keeps its lease
   * until it commits); concurrent fsyncs share the filesystem's journal commits.
   */
  private working = 0;
  private readonly poller: Poller;
  private readonly ai: AiEngines;
  private readonly onCancel = (id: string) => this.running.get(id)?.abort(new StopReason('cancelled'));
  /** This pool as GET /workers lists it (queue/worker-registry.ts), kept by `beat`. */
  private readonly row: WorkersTable;
  private beat: NodeJS.Timeout | null = null;
  private registered: Promise<void> = Promise.resolve();
  private readonly scratch: ScratchDirs;

  constructor(
    private readonly deps: Deps,
    private readonly opts: PoolOptions,
  ) {
    this.ai = new AiEngines(deps);
    this.scratch = new ScratchDirs(deps.tmpDir, (1 + ENDING_PER_SLOT) * opts.concurrency);
    const started = iso(deps.clock.now());
    this.row = {
      id: this.owner,
      host: os.hostname(),
      pid: process.pid,
      concurrency: opts.concurrency,
      started,
      heartbeat: started,
    };
    this.poller = new Poller({
      signal: TASK_READY,
      pollMs: opts.pollMs,
      pass: async (timer) => {
        if (timer) await this.recoverExpired().catch((err: unknown) => deps.log.warn({ err }, 'lease recovery failed'));
        await this.fill();
      },
      onError: (err) => deps.log.error({ err }, 'claiming a task failed'),
    });
  }

  start(): void {
    signals.on(TASK_CANCELLED, this.onCancel);
    const { db, log, clock } = this.deps;
    this.registered = registerWorker(db, this.row).catch((err: unknown) =>
      log.warn({ err }, 'registering the worker failed'),
    );
    this.beat = setInterval(() => {
      beatWorker(db, this.row, clock.now(), workerStaleMs(this.opts.leaseMs)).catch((err: unknown) =>
        log.warn({ err }, 'worker heartbeat failed'),
      );
    }, workerBeatMs(this.opts.leaseMs));
    this.beat.unref();
    this.poller.start();
  }

  /** Stops claiming; running tasks get `drainMs` to finish, then are aborted and released for another worker. */
  async stop(graceMs = this.opts.drainMs): Promise<void> {
    await this.poller.stop();
    signals.off(TASK_CANCELLED, this.onCancel);
    const deadline = Date.now() + graceMs;
    while (this.running.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const c of this.running.values()) c.abort(new StopReason('shutdown'));
    while (this.running.size > 0) await new Promise((r) => setTimeout(r, 20));
    if (this.beat) clearInterval(this.beat);
    await this.registered;
    await removeWorker(this.deps.db, this.owner).catch((err: unknown) =>
      this.deps.log.warn({ err }, 'removing the worker row failed'),
    );
    await this.ai.close();
    await this.scratch.close();
  }

  get busy(): number {
    return this.running.size;
  }

  /** Claims while there are free slots and due tasks; each task ending asks for another pass. */
  private async fill(): Promise<void> {
    const { concurrency } = this.opts;
    const maxRunning = (1 + ENDING_PER_SLOT) * concurrency;
    while (!this.poller.isStopped && this.working < concurrency && this.running.size < maxRunning) {
      const timeline = new TaskTimeline();
      const claimed = await claim(this.deps.db, this.owner, this.opts.leaseMs, this.deps.clock.now());
      if (!claimed) break;
      const { task, inputFile } = claimed;
      timeline.mark('claim');
      const controller = new AbortController();
      this.running.set(task.id, controller);
      this.working++;
      let slot = true;
      const leaveSlot = () => {
        if (!slot) return;
        slot = false;
        this.working--;
        // On the next turn of the event loop: the task that left starts storing its outputs first
        // (journal entry, write, fsyncs in libuv's pool), and the next claim runs while it waits on
        // the disk instead of ahead of it (on SQLite the claim ran first, 0.3–0.4 ms on the path).
        setImmediate(() => this.poller.wake());
      };
      void this.run(task, inputFile, controller, timeline, leaveSlot).finally(() => {
        // The slot was left when the kind's work ended, with a pass to claim the next task; another
        // pass now only when the tasks still ending were what held the claims back (each empty
        // claim is a statement, two on PostgreSQL).
        const ending = this.running.size >= maxRunning;
        this.running.delete(task.id);
        if (slot) leaveSlot();
        else if (ending) this.poller.wake();
      });
      // The task just claimed starts (its input, its kind's first call) before the next claim.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  private async recoverExpired(): Promise<void> {
    const now = this.deps.clock.now();
    for (const task of await expiredLeases(this.deps.db, now)) {
      if (task.attempts >= task.max_attempts) {
        await this.end(task, {
          code: 'worker_lost',
          message: `the worker running this task stopped responding ${task.attempts} times`,
        });
      } else if (await release(this.deps.db, task, now, now)) {
        this.deps.log.warn({ task: task.id, owner: task.lease_owner }, 'lease expired: task put back');
      }
    }
  }

  /** Fails the task for good, ending its workflow step; false when it was not ours any more. */
  private async end(task: TasksTable, failure: { code: string; message: string }): Promise<boolean> {
    // A worker lost while its package was playable: that unfinished package goes with the task.
    if (task.output_file_id) await discardProcessingFile(this.deps, task.project_id, task.output_file_id);
    return transact(this.deps.db, async (trx) => {
      const now = iso(this.deps.clock.now());
      const row = await fail(trx, task, failure, now);
      if (row) await advance(trx, row, now);
      return row !== undefined;
    });
  }

  private async run(
    task: TasksTable,
    inputFile: InputFileRow | null | undefined,
    controller: AbortController,
    timeline: TaskTimeline,
    leaveSlot: () => void,
  ): Promise<void> {
    const { deps } = this;
    const kind = kindEntry(task.kind);
    const policy = policyOf(task.kind);
    const log = deps.log.child({ task: task.id, kind: task.kind, attempt: task.attempts });
    let progress: number | undefined;
    let progressWritten = 0;
    const beat = setInterval(
      () => {
        heartbeat(deps.db, task, this.opts.leaseMs, deps.clock.now(), progress)
          .then((ours) => {
            if (!ours) controller.abort(new StopReason('lease_lost'));
          })
          .catch((err: unknown) => log.warn({ err }, 'heartbeat failed'));
      },
      Math.max(50, Math.floor(this.opts.leaseMs / 3)),
    );
    const timeout = setTimeout(
      () => controller.abort(Object.assign(new Error('task timeout'), { reason: 'timeout' })),
      policy.timeoutMs,
    );
    const workDir = this.scratch.take(task.id);
    let completed = false;
    // The package this attempt stores while it is made, once the kind asks for its writer.
    const early: { pkg: GrowingPackage | null } = { pkg: null };
    try {
      // An earlier attempt's package, playable but unfinished when its process died: a clean start.
      if (task.output_file_id) await discardProcessingFile(deps, task.project_id, task.output_file_id);
      if (!kind)
        throw new AppError(
          'kind_not_supported',
          `kind "${task.kind}" is not a task kind this mediad knows (a row from a newer version?)`,
        );
      const target = JSON.parse(task.target) as TaskTarget;
      timeline.mark('setup');
      const input: KindInput | null = kind.needsInputFile
        ? await resolveInput(deps, task, inputFile, workDir, controller.signal)
        : null;
      timeline.mark('input');
      const ctx: RunContext = {
        task,
        target,
        signal: controller.signal,
        workDir,
        timeoutMs: policy.timeoutMs,
        log,
        config: deps.config,
        outbound: deps.outbound,
        ai: this.ai.ports(input),
        describe: () => this.describe(task, input),
        packageWriter: () => (early.pkg ??= packageWriterFor(deps, task, target, input)),
        progress: (p) => {
          progress = Math.max(progress ?? 0, Math.min(99, Math.round(p)));
          // Stored at most twice a second, apart from the (slower) heartbeat, so clients see it move.
          if (Date.now() - progressWritten < PROGRESS_WRITE_MS) return;
          progressWritten = Date.now();
          void heartbeat(deps.db, task, this.opts.leaseMs, deps.clock.now(), progress).catch(() => undefined);
        },
      };
      const options = runOptions(deps, task.project_id, task.kind, kindOptions(task));
      const result = await kind.run(ctx, options, input);
      controller.signal.throwIfAborted();
      timeline.mark('run');
      leaveSlot();
      await applyResult(deps, task, target, input, result, early.pkg, timeline);
      completed = true;
      log.info({ ms: Date.now() - Date.parse(task.started ?? task.created) }, 'task completed');
      observeTask(task, 'completed', deps.clock.now()); // metrics
    } catch (err) {
      // Whatever ends the attempt early (failure, cancel, shutdown), its playable package goes.
      await early.pkg
        ?.discard()
        .catch((e: unknown) => log.warn({ err: e }, 'discarding the unfinished package failed'));
      await this.handleFailure(task, controller, err, log);
    } finally {
      clearInterval(beat);
      clearTimeout(timeout);
      await this.scratch.release(workDir);
      timeline.mark('cleanup');
      if (completed) observeTaskPhases(task.kind, timeline.phases);
    }
  }

  /** The task, its media and its input file as the API shows them. */
  private async describe(task: TasksTable, input: KindInput | null): Promise<TaskSubject> {
    const { publicUrl } = this.deps.config;
    const file =
      input?.file ??
      (task.input_file_id ? await findFileRow(this.deps, task.project_id, task.input_file_id) : undefined);
    const media = file ? await findMedia(this.deps.db, task.project_id, file.media_id) : undefined;
    return {
      task: toTaskObject(task),
      media: media ? toMediaObject(publicUrl, media, []) : null,
      file: file ? toFileObject(publicUrl, file) : null,
    };
  }

  private async handleFailure(
    task: TasksTable,
    controller: AbortController,
    err: unknown,
    log: Deps['log'],
  ): Promise<void> {
    const reason: unknown = controller.signal.aborted ? controller.signal.reason : undefined;
    if (err instanceof LeaseLostError || (reason instanceof StopReason && reason.kind !== 'shutdown')) {
      log.info({ reason: reason instanceof StopReason ? reason.kind : 'lease_lost' }, 'task stopped');
      observeTask(task, 'cancelled', this.deps.clock.now()); // metrics
      return;
    }
    const now = this.deps.clock.now();
    if (reason instanceof StopReason) {
      await release(this.deps.db, task, now, now); // shutdown: another worker picks it up
      return;
    }
    const failure = classifyFailure(reason ?? err);
    if (failure.code === 'internal_error') log.error({ err }, 'task failed');
    if (failure.transient && task.attempts < task.max_attempts) {
      // The kind's backoff, or longer when a provider said when to come back (Retry-After).
      const delay = retryDelay(policyOf(task.kind), task.attempts, failure);
      await release(this.deps.db, task, new Date(now.getTime() + delay), now, {
        code: failure.code,
        message: failure.message,
      });
      log.warn({ code: failure.code, retryInMs: delay }, 'task failed; will retry');
      observeTask(task, 'retrying', now); // metrics
    } else {
      await this.end(task, failure);
      log.info({ code: failure.code }, 'task failed');
      observeTask(task, 'failed', now); // metrics
    }
  }
}
