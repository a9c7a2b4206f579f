import { mkdtempSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * The tasks' scratch directories of one worker pool. A task that ends with its directory empty (its
 * outputs are in the store) leaves it for the next task; any other is removed off the event loop.
 * Making and removing one per task held the pool's thread in the kernel: with every stored output
 * fsynced, ext4's journal made `mkdtemp` wait 0.2–0.3 ms and `rmdir` 0.6–0.7 ms on average with two
 * worker processes on PostgreSQL (bench/pg-trace.ts), while the pool's other tasks waited to send
 * their queries.
 */
export class ScratchDirs {
  private readonly spare: string[] = [];

  constructor(
    private readonly root: string,
    /** How many empty directories are kept (the most tasks a pool has at once). */
    private readonly keep: number,
  ) {}

  /**
   * An empty directory for a task: a spare one, else a new one, made synchronously (libuv's pool
   * is often busy with sharp's runs and fsyncs, and the task waits for its directory).
   */
  take(): string {
    return this.spare.pop() ?? mkdtempSync(path.join(this.root, 'task-'));
  }

  /**
   * After the task: kept when `reuse` (it ended normally: nothing of it can still be writing there)
   * and the directory is empty, otherwise removed with whatever is left in it.
   */
  async give(dir: string, reuse: boolean): Promise<void> {
    if (reuse && this.spare.length < this.keep) {
      const left = await fs.readdir(dir).catch(() => null);
      if (left?.length === 0) {
        this.spare.push(dir);
        return;
      }
    }
    await fs.rm(dir, { recursive: true, force: true });
  }
}
