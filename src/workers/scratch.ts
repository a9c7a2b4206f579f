import { mkdtempSync, renameSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBase62 } from '../ids.js';

/**
 * The tasks' scratch directories, each kept for a later task once its own is done instead of
 * removed and made again. A new directory is a new inode, and ext4's allocator searches for a free
 * one that was not deleted a moment ago: a directory made and removed per task cost about 0.4 ms
 * of CPU (a scratch loop on this machine class: 0.90–1.16 ms for mkdtemp and rmdir around a file's
 * create, link and unlink, against 0.55–0.67 ms with two renames and 0.52–0.71 ms for the file
 * alone), 6% of the SQLite server's main thread in a batch of small tasks (perf). A kept directory is
 * renamed for its next task, so its name still shows which task a tool works for (`ps`). They live
 * in the process's own scratch root (runtime.ts), which goes with the process and is swept at a
 * restart.
 */
export class ScratchDirs {
  private readonly spare: string[] = [];

  constructor(
    private readonly root: string,
    /** At most this many kept (the tasks a pool may have at once). */
    private readonly keep: number,
  ) {}

  /**
   * A directory for the task's work. Made synchronously: libuv's pool is often busy with sharp's
   * runs and fsyncs, and the task waits for its directory (one metadata syscall).
   */
  take(taskId: string): string {
    const prefix = path.join(this.root, `task-${taskId}-`);
    const spare = this.spare.pop();
    if (spare !== undefined) {
      const dir = `${prefix}${randomBase62(6)}`;
      try {
        renameSync(spare, dir);
        return dir;
      } catch {
        // Removed meanwhile: a new one below.
      }
    }
    return mkdtempSync(prefix);
  }

  /**
   * The task is done with `dir`: kept when it is empty (its outputs were moved to the store),
   * removed otherwise. Off the event loop: behind ext4's journal a metadata call can wait
   * (a synchronous rmdir held the pool's thread 0.6–0.7 ms on average, bench/pg-trace.ts).
   */
  async release(dir: string): Promise<void> {
    const spare = this.spare.length < this.keep ? await this.keepAsSpare(dir) : null;
    if (spare) this.spare.push(spare);
    else await fs.rm(dir, { recursive: true, force: true });
  }

  /** `dir` renamed to a spare's name when it is empty; null when it is not, or is gone. */
  private async keepAsSpare(dir: string): Promise<string | null> {
    try {
      if ((await fs.readdir(dir)).length > 0) return null;
      const spare = path.join(this.root, `spare-${randomBase62(8)}`);
      await fs.rename(dir, spare);
      return spare;
    } catch {
      return null;
    }
  }

  /** Removes the kept directories (the pool stops). */
  async close(): Promise<void> {
    for (const dir of this.spare.splice(0)) await fs.rm(dir, { recursive: true, force: true });
  }
}
