import { Type } from 'typebox';
import { AppError } from '../errors.js';
import { defineKind } from './define.js';

const MAX_BODY_BYTES = 64 * 1024;
const TIMEOUT_MS = 30_000;

/**
 * http: calls a URL through the guarded client, with the task (and its media and file)
 * as JSON unless a body is given. The output records the answer; a non-2xx answer fails
 * the task (5xx and time-outs are retried).
 */
export const httpKind = defineKind({
  kind: 'http',
  options: Type.Object(
    {
      url: Type.String({ format: 'uri', maxLength: 4096 }),
      method: Type.Optional(Type.Enum(['POST', 'GET', 'PUT'])),
      headers: Type.Optional(
        Type.Record(Type.String({ pattern: '^[A-Za-z0-9-]{1,64}$' }), Type.String({ maxLength: 4096 }), {
          description:
            'Sent with the request. The values are write-only: stored sealed (MEDIAD_SECRET_KEY) and shown as REDACTED in every answer, event, delivery and webhook.',
        }),
      ),
      body: Type.Optional(Type.Unknown()),
    },
    { additionalProperties: false },
  ),
  needsInputFile: false,
  urlIsOption: true,
  async run(ctx) {
    const o = ctx.options;
    const method = o.method ?? 'POST';
    let body: string | undefined;
    if (method !== 'GET') body = JSON.stringify(o.body !== undefined ? o.body : await ctx.describe());
    const started = Date.now();
    const res = await ctx.outbound.request(o.url, {
      method,
      body,
      signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(TIMEOUT_MS)]),
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers },
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      const buf = Buffer.from(chunk);
      chunks.push(buf);
      size += buf.length;
      if (size >= MAX_BODY_BYTES) break;
    }
    const text = Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString('utf8');
    if (res.status < 200 || res.status > 299) {
      throw new AppError(
        res.status >= 500 || res.status === 429 ? 'source_unreachable' : 'source_rejected',
        `${o.url} answered ${res.status}`,
      );
    }
    return {
      output: {
        status: res.status,
        headers: res.headers,
        body: text,
        truncated: size > MAX_BODY_BYTES,
        duration_ms: Date.now() - started,
      },
    };
  },
});
