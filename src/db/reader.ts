import type { Worker } from 'node:worker_threads';
import type { RendererName } from './renderers.js';
import { rowBuilder, type RowBuilder } from './rows.js';
import { startThread } from './threads.js';

/** [a renderer of db/renderers.ts, its argument] */
export type RenderCall = [RendererName, unknown];
/** [request id, SQL, parameters, what renders the rows as JSON text (null: the rows themselves)] */
export type ReadRequest = [number, string, readonly unknown[], RenderCall | null];
/** [request id, rows as arrays or rendered JSON text, column names when new to the main thread, error] */
export type ReadReply = [
  number,
  unknown[][] | string | null,
  string[] | null,
  { message: string; code?: string | undefined } | null,
];

interface Pending {
  sql: string;
  resolve(rows: unknown[] | string): void;
  reject(err: Error): void;
}

/**
 * A second SQLite connection on a thread of its own, for the hot compiled reads (a file by id,
 * a page of files, a counter). better-sqlite3 is synchronous: on the main thread a read holds
 * up TLS, HTTP and JSON work for every other request, and turning its values into strings
 * costs as much as the read. Here the main thread only sends the SQL and receives the rows
 * (as JSON text where the values allow), so reads run beside the rest on another core.
 * Requests made in one turn of the event loop go as one message, and each read starts its
 * own WAL snapshot, so it sees every commit made before it was sent, whichever connection
 * or process made it. If the thread fails, compiledOnce reads through Kysely on the main connection.
 * openDatabase (connect.ts) makes one per SQLite file database, beside the Kysely instance.
 */
export class ReaderThread {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private readonly builders = new Map<string, RowBuilder>();
  private queue: ReadRequest[] = [];
  private nextId = 0;
  private failed: Error | null = null;

  constructor(private readonly file: string) {}

  /** Started by the first read, so commands that never read this way (migrate, keys) never start it. */
  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = startThread('reader-thread', { file: this.file });
    worker.on('message', (replies: ReadReply[] | string) =>
      this.settle(typeof replies === 'string' ? (JSON.parse(replies) as ReadReply[]) : replies),
    );
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`the SQLite reader thread exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  /** False once the thread has failed: callers then read on the main connection. */
  get usable(): boolean {
    return this.failed === null;
  }

  query(sql: string, parameters: readonly unknown[]): Promise<unknown[]> {
    return this.send(sql, parameters, null) as Promise<unknown[]>;
  }

  /**
   * The rows rendered as JSON text on the thread: a page of files costs the main thread
   * neither building its rows nor turning them into objects and then into JSON.
   */
  rendered(sql: string, parameters: readonly unknown[], renderer: RendererName, arg: unknown): Promise<string> {
    return this.send(sql, parameters, [renderer, arg]) as Promise<string>;
  }

  private send(sql: string, parameters: readonly unknown[], render: RenderCall | null): Promise<unknown[] | string> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { sql, resolve, reject });
      if (this.queue.length === 0) setImmediate(() => this.flush());
      this.queue.push([id, sql, parameters, render]);
    });
  }

  async close(): Promise<void> {
    this.fail(new Error('the database is closed'));
    await this.worker?.terminate();
  }

  private flush(): void {
    const batch = this.queue;
    this.queue = [];
    if (this.failed) return;
    const worker = this.started();
    worker.ref(); // awaited reads keep the process alive; an idle reader does not (settle)
    worker.postMessage(batch);
  }

  private settle(replies: ReadReply[]): void {
    for (const [id, rows, columns, error] of replies) {
      const p = this.pending.get(id);
      if (!p) continue;
      this.pending.delete(id);
      if (error) {
        p.reject(Object.assign(new Error(error.message), { code: error.code }));
        continue;
      }
      if (typeof rows === 'string') {
        p.resolve(rows);
        continue;
      }
      if (columns) this.builders.set(p.sql, rowBuilder(columns));
      const build = this.builders.get(p.sql);
      if (rows!.length > 0 && !build)
        p.reject(new Error('the SQLite reader thread sent rows without their column names'));
      else p.resolve(build ? rows!.map(build) : rows!);
    }
    if (this.pending.size === 0) this.worker?.unref();
  }

  private fail(err: Error): void {
    if (this.failed) return;
    this.failed = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    this.queue = [];
  }
}
