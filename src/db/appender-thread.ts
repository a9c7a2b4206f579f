// The appender thread's entry (see appender.ts): its own connection to the SQLite file runs
// batches of INSERT and DELETE statements, each batch in one transaction, so the main thread
// never does.
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { AppendReply, AppendRequest, AppendStatement } from './appender.js';

const STATEMENT_CACHE_SIZE = 32;

const db = new SQLite((workerData as { file: string }).file, { fileMustExist: true });
db.pragma('busy_timeout = 10000');
db.pragma('synchronous = NORMAL');

const statements = new Map<string, SQLite.Statement>();

function prepare(sql: string): SQLite.Statement {
  let stmt = statements.get(sql);
  if (!stmt) {
    if (!/^\s*(insert|delete)\s/i.test(sql)) throw new Error('the SQLite appender thread runs INSERT and DELETE only');
    stmt = db.prepare(sql);
    if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
    statements.set(sql, stmt);
  }
  return stmt;
}

const runAll = db.transaction((batch: AppendStatement[]) => {
  for (const [sql, values] of batch) prepare(sql).run(values);
});

parentPort!.on('message', ([id, batch]: AppendRequest) => {
  let reply: AppendReply;
  try {
    // IMMEDIATE: the write lock is taken first, so a busy file waits here (busy_timeout).
    runAll.immediate(batch);
    reply = [id, null];
  } catch (err) {
    const e = err as { message?: string; code?: string };
    reply = [id, { message: e.message ?? String(err), code: e.code }];
  }
  parentPort!.postMessage(reply);
});
