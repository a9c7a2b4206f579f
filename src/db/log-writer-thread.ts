// The request log writer's thread (see log-writer.ts): its own Kysely and connection to the
// SQLite file write each flush's segments and trims, one after another in the order sent.
import { parentPort, workerData } from 'node:worker_threads';
import { connect } from './connect.js';
import type { LogWriteReply, LogWriteRequest } from './log-writer.js';
import { writeSegments } from './queries/request-log.js';

const db = connect({ dialect: 'sqlite', file: (workerData as { file: string }).file });
let last = Promise.resolve();

parentPort!.on('message', ([id, write]: LogWriteRequest) => {
  last = last.then(async () => {
    let reply: LogWriteReply;
    try {
      await writeSegments(db, write);
      reply = [id, null];
    } catch (err) {
      const e = err as { message?: string; code?: string };
      reply = [id, { message: e.message ?? String(err), code: e.code }];
    }
    parentPort!.postMessage(reply);
  });
});
