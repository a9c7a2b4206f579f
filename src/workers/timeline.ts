// Where a task attempt's time goes, phase by phase, from its claim to the end of its cleanup. The
// worker pool marks each phase's end; the phases go to GET /metrics as
// mediad_task_phase_seconds{kind,phase}, whose sum and count give each phase's mean (bench:tasks
// reads them to write down the fixed cost of a task beside the work of its kind).

/**
 * - claim: the claim query (pending → processing);
 * - setup: the task's scratch directory and options;
 * - input: the input file found (and fetched when not on local disk);
 * - run: the kind's own work (sharp, FFmpeg, a provider…);
 * - store: the outputs' blobs written (journal entry, fsync, rename);
 * - commit: the transaction that inserts the rows and completes the task;
 * - cleanup: the scratch directory removed (after the task's `finished`, but its slot is still taken).
 */
export type TaskPhase = 'claim' | 'setup' | 'input' | 'run' | 'store' | 'commit' | 'cleanup';

export class TaskTimeline {
  readonly phases: Partial<Record<TaskPhase, number>> = {};
  private last: number;

  constructor(start = performance.now()) {
    this.last = start;
  }

  /** Ends `phase` now: the time since the previous mark is its own. */
  mark(phase: TaskPhase): void {
    const now = performance.now();
    this.phases[phase] = (this.phases[phase] ?? 0) + (now - this.last);
    this.last = now;
  }
}
