// The reader thread's entry (see reader.ts): its own read-only connection to the SQLite
// file answers batches of hot reads, so the main thread never runs them itself.
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { ReadReply, ReadRequest } from './reader.js';
import { RENDERERS, SQL_RENDERERS, type RendererName } from './renderers.js';
import { encodePath, ENCODE_PATH_FUNCTION } from '../shapes/files.js';
import { statementRowBuilder, type RowBuilder } from './rows.js';

const STATEMENT_CACHE_SIZE = 200;

const db = new SQLite((workerData as { file: string }).file, { fileMustExist: true });
db.pragma('busy_timeout = 10000');
db.pragma('query_only = ON'); // this connection can never write, whatever SQL reaches it
// The SQL renderers' percent-encoding of paths that need it (the same function as the JavaScript ones').
db.function(ENCODE_PATH_FUNCTION, { deterministic: true }, (folder, filename) =>
  encodePath(String(folder), String(filename)),
);

/** sentWidth: the row width whose column names the main thread has; toObject: rows as objects, for renderers. */
interface Prepared {
  stmt: SQLite.Statement;
  sentWidth: number;
  toObject: RowBuilder;
}
const statements = new Map<string, Prepared>();

/** `key`'s value in a cache of at most STATEMENT_CACHE_SIZE entries (the oldest goes first), made if missing. */
function cached<K, V>(cache: Map<K, V>, key: K, make: () => V): V {
  let value = cache.get(key);
  if (value === undefined) {
    value = make();
    if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(key, value);
  }
  return value;
}

function readOnly(sql: string): SQLite.Statement {
  const stmt = db.prepare(sql);
  if (!stmt.readonly || !stmt.reader) throw new Error('the SQLite reader thread runs read-only queries only');
  return stmt;
}

function prepare(sql: string): Prepared {
  return cached(statements, sql, () => {
    const stmt = readOnly(sql);
    return {
      stmt: stmt.raw(true),
      sentWidth: -1,
      toObject: statementRowBuilder(() => stmt.columns().map((c) => c.name)),
    };
  });
}

/** Reads as a SQL renderer wraps them, their one text column plucked: per renderer, by the read's SQL. */
const rendering = new Map<RendererName, Map<string, SQLite.Statement>>();

/** The JSON text of a read rendered by SQLite itself, or null when its renderer has no SQL form. */
function renderedInSql(name: RendererName, sql: string, arg: unknown, parameters: readonly unknown[]): string | null {
  const renderer = SQL_RENDERERS[name];
  if (!renderer) return null;
  const byRead = cached(rendering, name, () => new Map<string, SQLite.Statement>());
  const stmt = cached(byRead, sql, () => readOnly(renderer.select(sql)).pluck(true));
  return renderer.combine(stmt.all(arg, ...parameters) as string[]);
}

function answer([id, sql, parameters, render]: ReadRequest): ReadReply {
  try {
    const inSql = render ? renderedInSql(render[0], sql, render[1], parameters) : null;
    if (inSql !== null) return [id, inSql, null, null];
    const p = prepare(sql);
    const rows = p.stmt.all(parameters) as unknown[][];
    if (render) {
      const [name, arg] = render;
      // The renderer's arg and rows types are its own; the table pairs them with the read that names it.
      const fn = RENDERERS[name] as (arg: unknown, rows: unknown[]) => string;
      return [id, fn(arg, rows.map(p.toObject)), null, null];
    }
    // Column names travel only when the row width is new to the main thread: a schema change
    // by another process re-prepares a `select *` with other columns.
    const width = rows[0]?.length ?? -1;
    const columns = width >= 0 && width !== p.sentWidth ? p.stmt.columns().map((c) => c.name) : null;
    if (columns) p.sentWidth = width;
    return [id, rows, columns, null];
  } catch (err) {
    const e = err as { message?: string; code?: string };
    return [id, null, null, { message: e.message ?? String(err), code: e.code }];
  }
}

/** Strings, finite numbers and nulls survive JSON unchanged; blobs, bigints and NaN do not. */
function jsonSafe(rows: unknown[][] | string | null): boolean {
  // Rendered JSON text goes by structured clone: a copy, where JSON would escape every quote.
  if (typeof rows === 'string') return false;
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
// A rendered reply counts as a row per this many characters of its JSON text (a file's object is
// about 800), so up to four pages of 20 files share a part, or forty single files: on the main
// thread each message costs a dispatch through MessagePort's EventTarget, and rendering a page
// here takes well under a tenth of a millisecond.
const RENDERED_CHARS_PER_ROW = 1500;

// A part goes as one JSON text where it can: the main thread's JSON.parse builds the values
// in well under half the time structured-clone deserialising takes, and that is the thread
// every request waits for.
function send(replies: ReadReply[], json: boolean): void {
  parentPort!.postMessage(json ? JSON.stringify(replies) : replies);
}

parentPort!.on('message', (batch: ReadRequest[]) => answerAll(batch));

// A batch is read in one transaction: one snapshot and one round of file locking for all its
// reads instead of one each. Every read in it was sent before the batch arrived, so each still
// sees every commit made before it was sent.
const begin = db.prepare('begin');
const commit = db.prepare('commit');

function answerAll(batch: ReadRequest[]): void {
  begin.run();
  try {
    answerInParts(batch);
  } finally {
    commit.run();
  }
}

function answerInParts(batch: ReadRequest[]): void {
  let replies: ReadReply[] = [];
  let rows = 0;
  let json = true;
  for (const request of batch) {
    const reply = answer(request);
    replies.push(reply);
    json &&= jsonSafe(reply[1]);
    rows +=
      typeof reply[1] === 'string' ? Math.ceil(reply[1].length / RENDERED_CHARS_PER_ROW) || 1 : (reply[1]?.length ?? 1);
    if (rows >= ROWS_PER_REPLY) {
      send(replies, json);
      replies = [];
      rows = 0;
      json = true;
    }
  }
  if (replies.length > 0) send(replies, json);
}
