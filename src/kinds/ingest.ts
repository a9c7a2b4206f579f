import { Type } from 'typebox';
import type { KindProcessor } from './types.js';
import { scratchPath, storeLocalFile } from '../services/files.js';
import { completeTask } from '../queue/finish.js';
import { fileSummary } from '../services/task-representation.js';
import { Metadata } from '../http/schemas.js';

/** ingest: POST /files, asynchronously. The file, its media and the task's completion commit together. */
export const ingestKind: KindProcessor = {
  kind: 'ingest',
  options: Type.Object({ media_id: Type.Optional(Type.String({ maxLength: 64 })), metadata: Type.Optional(Metadata) }, { additionalProperties: false }),
  policy: { maxAttempts: 5, backoffMs: 2_000, timeoutMs: 2 * 3600_000 },
  needsInputFile: false,
  async run(ctx) {
    const path = scratchPath({ tmpDir: ctx.workDir }, 'ingest');
    await ctx.deps.outbound.download(ctx.task.input_url!, path, { signal: ctx.signal });
    ctx.progress(90);
    const opts = ctx.options as { media_id?: string; metadata?: Record<string, unknown> };
    return {
      commit: async () => {
        await storeLocalFile(ctx.deps, { projectId: ctx.task.project_id }, path, { ...ctx.target, ...opts }, undefined, (trx, file) =>
          completeTask(ctx.deps, trx, ctx.task, file.id, fileSummary(file)));
      },
    };
  },
};
