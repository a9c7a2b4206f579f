import { signals } from './signals.js';

export interface PollerOptions {
  /** The in-process signal that wakes the loop (signals.ts); null: the poll alone. */
  signal: string | null;
  /** How often it looks for work nobody signalled (other processes' work, retries coming due). */
  pollMs: number;
  /** Does the work there is; `timer` says whether the poll (not a signal) started this pass. */
  pass(timer: boolean): Promise<void>;
  onError(err: unknown): void;
}

/**
 * The shape of the background loops (task workers, event dispatch, webhook delivery): a pass runs
 * when the loop's signal fires and every `pollMs`; passes never overlap, and a signal that comes
 * during a pass causes one more, so no wake-up is lost. stop() waits for the pass in progress.
 */
export class Poller {
  private stopped = false;
  private running: Promise<void> | null = null;
  private again = false;
  private timer?: NodeJS.Timeout;
  private readonly onSignal = () => void this.run(false);

  constructor(private readonly opts: PollerOptions) {}

  start(): void {
    if (this.opts.signal) signals.on(this.opts.signal, this.onSignal);
    const tick = async () => {
      await this.run(true);
      if (!this.stopped) this.timer = setTimeout(tick, this.opts.pollMs);
    };
    void tick();
  }

  /** A pass now (or one more after the current one). */
  wake(): void {
    void this.run(false);
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.opts.signal) signals.off(this.opts.signal, this.onSignal);
    while (this.running) await this.running;
  }

  private run(timer: boolean): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        let fromTimer = timer;
        do {
          this.again = false;
          await this.opts.pass(fromTimer).catch(this.opts.onError);
          fromTimer = false;
        } while (this.again && !this.stopped);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }
}
