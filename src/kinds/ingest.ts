import { Type } from 'typebox';
import type { KindProcessor } from './types.js';
import { scratchPath, storeLocalFile } from '../services/files.js';
import { completeTask } from '../queue/finish.js';
import { fileSummary } from '../services/task-representation.js';
import { Metadata } from '../http/schemas.js';
import { AppError } from '../errors.js';
import { findMedia } from '../services/media.js';
import { parseChain } from '../db/queries/events.js';

/** ingest: POST /files, asynchronously. The file, its media and the task's completion commit together. */
export const ingestKind: KindProcessor = {
  kind: 'ingest',
  options: Type.Object({ media_id: Type.Optional(Type.String({ maxLength: 64 })), metadata: Type.Optional(Metadata) }, { additionalProperties: false }),
  policy: { maxAttempts: 5, backoffMs: 2_000, timeoutMs: 2 * 3600_000 },
  needsInputFile: false,
  async admit(deps, projectId, options) {
    const mediaId = options.media_id;
    if (typeof mediaId === 'string' && !(await findMedia(deps.db, projectId, mediaId))) {
      throw new AppError('not_found', `no media ${mediaId} in this project`, { details: [{ field: 'media_id', message: 'not found' }] });
    }
  },
  async run(ctx) {
    const path = scratchPath({ tmpDir: ctx.workDir }, 'ingest');
    await ctx.deps.outbound.download(ctx.task.input_url!, path, { signal: ctx.signal });
    ctx.progress(90);
    const opts = ctx.options as { media_id?: string; metadata?: Record<string, unknown> };
    return {
      commit: async () => {
        await storeLocalFile(ctx.deps, { projectId: ctx.task.project_id, chain: parseChain(ctx.task.chain) }, path, { ...ctx.target, ...opts }, undefined, (trx, file) =>
          completeTask(ctx.deps, trx, ctx.task, file.id, fileSummary(file)));
      },
    };
  },
};
