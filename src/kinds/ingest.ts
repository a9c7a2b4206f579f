import { Type } from 'typebox';
import { AppError } from '../errors.js';
import { Metadata } from '../schemas.js';
import { sourceName } from '../net/index.js';
import { defineKind } from './define.js';

/** ingest: POST /files, asynchronously. The worker pool stores the file (and its media) and completes the task together. */
export const ingestKind = defineKind({
  kind: 'ingest',
  options: Type.Object(
    { media_id: Type.Optional(Type.String({ maxLength: 64 })), metadata: Type.Optional(Metadata) },
    { additionalProperties: false },
  ),
  needsInputFile: false,
  async admit(ports, projectId, options) {
    if (options.media_id !== undefined && !(await ports.mediaExists(projectId, options.media_id))) {
      throw new AppError('not_found', `no media ${options.media_id} in this project`, {
        details: [{ field: 'media_id', message: 'not found' }],
      });
    }
  },
  async run(ctx) {
    if (!ctx.task.input_url) throw new Error('an ingest task has no url');
    const path = `${ctx.workDir}/ingest`;
    await ctx.outbound.download(ctx.task.input_url, path, { signal: ctx.signal });
    ctx.progress(90);
    const title = ctx.options.media_id ? undefined : sourceName(ctx.task.input_url);
    return { ingested: { path, ...ctx.options, ...(title ? { title } : {}) } };
  },
});
