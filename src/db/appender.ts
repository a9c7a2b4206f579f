import { Worker } from 'node:worker_threads';

/** [sql, its parameters] */
export type AppendStatement = [string, readonly unknown[]];
/** [request id, the statements to run in one transaction] */
export type AppendRequest = [number, AppendStatement[]];
/** [request id, error] */
export type AppendReply = [number, { message: string; code?: string | undefined } | null];

// As in reader.ts: built, the entry is the .js beside this file; from sources (tsx) a bootstrap
// registers tsx's loader in the worker before importing the .ts entry.
const FROM_SOURCES = import.meta.url.endsWith('.ts');
const ENTRY = new URL(FROM_SOURCES ? './appender-thread.ts' : './appender-thread.js', import.meta.url);
const startWorker = (workerData: unknown) =>
  FROM_SOURCES
    ? new Worker(
        `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(ENTRY.href)}); });`,
        { eval: true, workerData },
      )
    : new Worker(ENTRY, { workerData });

/**
 * A SQLite connection on a thread of its own for bulk writes the main thread should not pay for:
 * the request log's rows and their trimming, thousands a second under load. better-sqlite3 is
 * synchronous, so on the main thread every insert and delete is time no request is answered in
 * (bench:request-log measured the log's rows, written and trimmed there, at +15 µs a request and
 * twice the p99). Here the main thread only posts the statements; the thread runs each batch in
 * one transaction, a second writer of the file as `mediad worker` processes are (WAL and
 * busy_timeout serialise them). Batches run in the order they were sent. Once the thread has
 * failed, `usable` is false and the caller writes on its own connection.
 */
export class AppendThread {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve(): void; reject(err: Error): void }>();
  private nextId = 0;
  private failed: Error | null = null;

  constructor(private readonly file: string) {}

  get usable(): boolean {
    return this.failed === null;
  }

  /** Runs the statements in one transaction on the thread; settles once it has committed. */
  run(statements: AppendStatement[]): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      const worker = this.started();
      worker.ref(); // a batch in flight keeps the process alive; an idle thread does not
      const request: AppendRequest = [id, statements];
      worker.postMessage(request);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.fail(new Error('the database is closed'));
    await worker?.terminate();
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker({ file: this.file });
    worker.on('message', ([id, error]: AppendReply) => {
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      if (error) p.reject(Object.assign(new Error(error.message), { code: error.code }));
      else p.resolve();
      if (this.pending.size === 0) worker.unref();
    });
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`the SQLite appender thread exited (code ${code})`)));
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
