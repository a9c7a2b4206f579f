import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createWriteStream } from 'node:fs';
import type { Deps } from '../deps.js';
import { iso } from '../deps.js';
import type { TasksTable } from '../db/schema.js';
import { transact } from '../db/transact.js';
import { AppError } from '../errors.js';
import type { KindInput } from '../kinds/define.js';
import { probeFile, type ProbeResult } from '../media/index.js';
import { attachInput, type InputFileRow } from '../queue/task-state.js';
import { scratchPath, stageLocalFile } from '../services/media/file-store.js';
import { findFileRow } from '../services/media/files.js';
import { parseChain } from '../shapes/events.js';
import { sourceName } from '../net/index.js';

/**
 * The task's input as a local file. A `url` input is first stored as a file of a new
 * media (as POST /files does) and recorded on the task in the same transaction, so a
 * retry reuses it instead of fetching and creating it again.
 */
export async function resolveInput(
  deps: Deps,
  task: TasksTable,
  /** The input file's row as the claim read it (undefined: not read). */
  claimed: InputFileRow | null | undefined,
  workDir: string,
  signal: AbortSignal,
): Promise<KindInput> {
  let fileId = task.input_file_id;
  if (!fileId) {
    if (!task.input_url) throw new Error(`task ${task.id} has neither an input file nor a url`);
    const download = scratchPath({ tmpDir: workDir }, 'source');
    await deps.outbound.download(task.input_url, download, { signal });
    const staged = await stageLocalFile(deps, { projectId: task.project_id, chain: parseChain(task.chain) }, download, {
      ...(sourceName(task.input_url) ? { title: sourceName(task.input_url)! } : {}),
    });
    try {
      fileId = await transact(deps.db, async (trx) => {
        const file = await staged.insert(trx);
        await attachInput(trx, task, file, iso(deps.clock.now()));
        return file.id;
      });
      staged.committed();
    } catch (err) {
      throw await staged.abandon(err);
    }
  }
  // Read with the claim on PostgreSQL; else on the main connection, not the reader thread: one
  // indexed row, and a worker waits for it (the thread's round trip queues behind the API's reads).
  const row =
    fileId === task.input_file_id && claimed !== undefined
      ? claimed
      : await findFileRow({ db: deps.db, reader: null }, task.project_id, fileId);
  if (!row) throw new AppError('not_found', `the input file ${fileId} no longer exists`);
  let local = deps.blobs.localPath(row.blob_key);
  if (!local) {
    local = path.join(workDir, `input-${row.id}`);
    await pipeline(await deps.blobs.read(row.blob_key), createWriteStream(local));
  }
  const probe = row.probe
    ? (JSON.parse(row.probe) as ProbeResult)
    : await probeFile(local, deps.config.limits, { signal });
  return { path: local, file: row, probe };
}
