import { Type } from 'typebox';
import { AppError } from '../errors.js';
import { findFileRow } from '../services/files.js';
import { findMedia } from '../services/media.js';
import { toFileObject, toMediaObject } from '../services/representations.js';
import { toTaskObject } from '../services/task-representation.js';
import type { KindProcessor } from './types.js';

const MAX_BODY_BYTES = 64 * 1024;
const TIMEOUT_MS = 30_000;

/**
 * http: calls a URL through the guarded client, with the task (and its media and file)
 * as JSON unless a body is given. The output records the answer; a non-2xx answer fails
 * the task (5xx and time-outs are retried).
 */
export const httpKind: KindProcessor = {
  kind: 'http',
  options: Type.Object({
    url: Type.String({ format: 'uri', maxLength: 4096 }),
    method: Type.Optional(Type.Union([Type.Literal('POST'), Type.Literal('GET'), Type.Literal('PUT')])),
    headers: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Za-z0-9-]{1,64}$' }), Type.String({ maxLength: 4096 }))),
    body: Type.Optional(Type.Unknown()),
  }, { additionalProperties: false }),
  policy: { maxAttempts: 4, backoffMs: 5_000, timeoutMs: 60_000 },
  needsInputFile: false,
  urlIsOption: true,
  async run(ctx) {
    const o = ctx.options as { url: string; method?: 'POST' | 'GET' | 'PUT'; headers?: Record<string, string>; body?: unknown };
    const method = o.method ?? 'POST';
    let body: string | undefined;
    if (method !== 'GET') body = JSON.stringify(o.body !== undefined ? o.body : await defaultBody(ctx));
    const started = Date.now();
    const res = await ctx.deps.outbound.request(o.url, {
      method, body, signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(TIMEOUT_MS)]),
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers },
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= MAX_BODY_BYTES) break;
    }
    const text = Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString('utf8');
    if (res.status < 200 || res.status > 299) {
      throw new AppError(res.status >= 500 || res.status === 429 ? 'source_unreachable' : 'source_rejected', `${o.url} answered ${res.status}`);
    }
    return { output: { status: res.status, headers: res.headers, body: text, truncated: size > MAX_BODY_BYTES, duration_ms: Date.now() - started } };
  },
};

async function defaultBody(ctx: Parameters<KindProcessor['run']>[0]) {
  const { publicUrl } = ctx.deps.config;
  const file = ctx.task.input_file_id ? await findFileRow(ctx.deps, ctx.task.project_id, ctx.task.input_file_id) : undefined;
  const media = file ? await findMedia(ctx.deps.db, ctx.task.project_id, file.media_id) : undefined;
  return { task: toTaskObject(ctx.task), media: media ? toMediaObject(publicUrl, media, []) : null, file: file ? toFileObject(publicUrl, file) : null };
}
