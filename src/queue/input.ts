import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createWriteStream } from 'node:fs';
import type { Deps } from '../deps.js';
import { iso } from '../deps.js';
import { AppError } from '../errors.js';
import type { TasksTable } from '../db/schema.js';
import { parseChain } from '../db/queries/events.js';
import type { KindInput } from '../kinds/types.js';
import { probeFile, type ProbeResult } from '../media/index.js';
import { findFileRow, scratchPath, storeLocalFile } from '../services/files.js';
import { fileSummary } from '../services/task-representation.js';
import { LeaseLostError } from './finish.js';

/**
 * The task's input as a local file. A `url` input is first stored as a file of a new
 * media (as POST /files does) and recorded on the task in the same transaction, so a
 * retry reuses it instead of fetching and creating it again.
 */
export async function resolveInput(deps: Deps, task: TasksTable, workDir: string, signal: AbortSignal): Promise<KindInput> {
  let fileId = task.input_file_id;
  if (!fileId) {
    const download = scratchPath({ tmpDir: workDir }, 'source');
    await deps.outbound.download(task.input_url!, download, { signal });
    const file = await storeLocalFile(deps, { projectId: task.project_id, chain: parseChain(task.chain) }, download, {}, undefined, async (trx, f) => {
      const res = await trx.updateTable('tasks').set({ input_file_id: f.id, input: JSON.stringify(fileSummary(f)), updated: iso(deps.clock.now()) })
        .where('id', '=', task.id).where('status', '=', 'processing').where('lease_owner', '=', task.lease_owner).executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) throw new LeaseLostError(task.id);
    });
    fileId = file.id;
  }
  const row = await findFileRow(deps, task.project_id, fileId);
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
