// The reader thread's entry (see reader.ts): its own read-only connection to the SQLite
// file answers batches of hot reads, so the main thread never runs them itself.
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { ReadReply, ReadRequest } from './reader.js';

const STATEMENT_CACHE_SIZE = 200;

const db = new SQLite((workerData as { file: string }).file, { fileMustExist: true });
db.pragma('busy_timeout = 10000');
db.pragma('query_only = ON'); // this connection can never write, whatever SQL reaches it

interface Prepared { stmt: SQLite.Statement; width: number }
const statements = new Map<string, Prepared>();

function prepare(sql: string): Prepared {
  let p = statements.get(sql);
  if (!p) {
    const stmt = db.prepare(sql);
    if (!stmt.readonly || !stmt.reader) throw new Error('the SQLite reader thread runs read-only queries only');
    p = { stmt: stmt.raw(true), width: -1 };
    if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
    statements.set(sql, p);
  }
  return p;
}

function answer([id, sql, parameters]: ReadRequest): ReadReply {
  try {
    const p = prepare(sql);
    const rows = p.stmt.all(parameters) as unknown[][];
    // Column names travel only when a statement's row width is new to the main thread: a
    // schema change by another process re-prepares a `select *` with other columns.
    const width = rows[0]?.length ?? p.width;
    const columns = width !== p.width ? p.stmt.columns().map((c) => c.name) : null;
    p.width = width;
    return [id, rows, columns, null];
  } catch (err) {
    const e = err as { message?: string; code?: string };
    return [id, null, null, { message: e.message ?? String(err), code: e.code }];
  }
}

/** Strings, finite numbers and nulls survive JSON unchanged; blobs, bigints and NaN do not. */
function jsonSafe(rows: unknown[][] | null): boolean {
  if (!rows) return true;
  for (const row of rows) {
    for (const v of row) {
      if (typeof v === 'number' ? !Number.isFinite(v) : v !== null && typeof v !== 'string') return false;
    }
  }
  return true;
}

// Replies go back in parts of about this many rows, so the main thread starts answering the
// first requests of a large batch while the rest are still being read.
const ROWS_PER_REPLY = 40;

// A part goes as one JSON text where it can: the main thread's JSON.parse builds the values
// in well under half the time structured-clone deserialising takes, and that is the thread
// every request waits for.
function send(replies: ReadReply[], json: boolean): void {
  parentPort!.postMessage(json ? JSON.stringify(replies) : replies);
}

parentPort!.on('message', (batch: ReadRequest[]) => {
  let replies: ReadReply[] = [];
  let rows = 0;
  let json = true;
  for (const request of batch) {
    const reply = answer(request);
    replies.push(reply);
    json &&= jsonSafe(reply[1]);
    rows += reply[1]?.length ?? 1;
    if (rows >= ROWS_PER_REPLY) {
      send(replies, json);
      replies = [];
      rows = 0;
      json = true;
    }
  }
  if (replies.length > 0) send(replies, json);
});
