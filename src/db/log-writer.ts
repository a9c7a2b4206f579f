import type { Worker } from 'node:worker_threads';
import type { Db } from './connect.js';
import { writeSegments, type SegmentWrite } from './queries/request-log.js';
import { startThread } from './threads.js';

/** [write id, the write] */
export type LogWriteRequest = [number, SegmentWrite];
/** [write id, error] */
export type LogWriteReply = [number, { message: string; code?: string | undefined } | null];

/**
 * Writes the request log's segments (db/queries/request-log.ts). For a SQLite file, on a thread
 * of its own with a second connection (log-writer-thread.ts): better-sqlite3 is synchronous, and
 * on the main thread, which answers every request, a flush's commit, the trims and above all the
 * WAL checkpoints that the log's writes bring about (an fsync, up to 10 ms) were time no request
 * was answered in (bench:request-log: 0.93 of the unrecorded throughput and p99 doubled, against
 * 0.97 when nothing was written). The thread is a second writer of the file as `mediad worker`
 * processes are (WAL and busy_timeout serialise them); writes run in the order they were sent.
 * On PostgreSQL or an in-memory database, or once the thread has failed, the caller's connection
 * writes.
 */
export class LogWriter {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve(): void; reject(err: Error): void }>();
  private nextId = 0;
  private failed: Error | null;

  constructor(
    private readonly db: Db,
    private readonly file: string | null,
  ) {
    this.failed = file ? null : new Error('no SQLite file: written on the caller’s connection');
  }

  async write(w: SegmentWrite): Promise<void> {
    if (!this.failed) {
      try {
        return await this.post(w);
      } catch (err) {
        // A write the database refused fails here too; a thread that died is not used again.
        if (!this.failed) throw err;
      }
    }
    await writeSegments(this.db, w);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.fail(new Error('the database is closed'));
    await worker?.terminate();
  }

  private post(w: SegmentWrite): Promise<void> {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      const worker = this.started();
      worker.ref(); // a write in flight keeps the process alive; an idle thread does not
      const request: LogWriteRequest = [id, w];
      worker.postMessage(request);
    });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = startThread('log-writer-thread', { file: this.file });
    worker.on('message', ([id, error]: LogWriteReply) => {
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      if (error) p.reject(Object.assign(new Error(error.message), { code: error.code }));
      else p.resolve();
      if (this.pending.size === 0) worker.unref();
    });
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`the request log's writer thread exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private fail(err: Error): void {
    if (this.failed) return;
    this.failed = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}
