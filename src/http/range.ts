import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';

export type RangeResult =
  { kind: 'full' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * Parses a Range header for a resource of `size` bytes (RFC 9110 14.2). Only single
 * byte ranges are served as 206; multiple ranges and unknown units fall back to the
 * whole body, which the RFC allows.
 */
export function parseRange(header: string | undefined, size: number): RangeResult {
  if (!header) return { kind: 'full' };
  const m = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/.exec(header.trim());
  if (!m) return { kind: 'full' };
  const [, a = '', b = ''] = m;
  if (a === '' && b === '') return { kind: 'full' };
  if (a === '') {
    const suffix = Number(b);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(a);
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  if (start >= size || (b !== '' && Number(b) < start)) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end };
}

/** True when an If-None-Match header matches the entity tag (weak comparison, as RFC 9110 asks for GET). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === bare);
}

/**
 * The body part of answering stored bytes, shared by file delivery (`/d/…`) and image URLs
 * (`/img/…`) once their validators are set and If-None-Match is handled: If-Range, Range (206
 * with Content-Range, or 416), Content-Type and Content-Length. Answers the slice to send
 * (undefined: all of it), or null for HEAD, whose answer is the headers alone.
 */
export function prepareBytes(
  req: FastifyRequest,
  reply: FastifyReply,
  bytes: { etag: string; size: number; type: string; noun: string },
): { slice: { start: number; end: number } | undefined } | null {
  const { etag, size } = bytes;
  const ifRange = req.headers['if-range'];
  const range = ifRange && ifRange !== etag ? { kind: 'full' as const } : parseRange(req.headers.range, size);
  reply.type(bytes.type);
  if (range.kind === 'unsatisfiable')
    throw new AppError('range_not_satisfiable', `the requested range is outside the ${bytes.noun}'s ${size} bytes`, {
      headers: { 'content-range': `bytes */${size}` },
    });
  const slice = range.kind === 'partial' ? { start: range.start, end: range.end } : undefined;
  if (slice) reply.code(206).header('content-range', `bytes ${slice.start}-${slice.end}/${size}`);
  reply.header('content-length', slice ? slice.end - slice.start + 1 : size);
  return req.method === 'HEAD' ? null : { slice };
}
