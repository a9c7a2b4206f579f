import { Type } from 'typebox';
import { findMedia } from '../services/media.js';
import { conditionSubject } from '../workflows/subject.js';
import { evaluate, type Condition } from '../workflows/conditions.js';
import { validateConditions } from '../workflows/steps.js';
import type { KindProcessor } from './types.js';

/** conditions: checks the media and its file against `conditions`; a workflow runs `next` only when all hold. */
export const conditionsKind: KindProcessor = {
  kind: 'conditions',
  options: Type.Object({ conditions: Type.Array(Type.Unknown()) }, { additionalProperties: false }),
  policy: { maxAttempts: 3, backoffMs: 1_000, timeoutMs: 60_000 },
  needsInputFile: true,
  problems: (options) => validateConditions(options.conditions, 'conditions'),
  async run(ctx, input) {
    const media = await findMedia(ctx.deps.db, ctx.task.project_id, input!.file.media_id);
    const subject = conditionSubject(ctx.deps.config.publicUrl, media, input!.file);
    return { output: null, results: evaluate(ctx.options.conditions as Condition[], subject) };
  },
};
