import type { FastifyRequest } from 'fastify';
import type { Page } from '../db/paginate.js';
import { versionOf } from './representation.js';

// Builders for the SPEC 2.1 envelope. Handlers return data; these add meta and links.

function baseMeta<T extends 'object' | 'list' | 'error'>(req: FastifyRequest, type: T) {
  return {
    request_id: req.id,
    org_id: req.auth?.orgId ?? null,
    project_id: req.auth?.projectId ?? null,
    version: versionOf(req),
    type,
  };
}

export function objectBody<T>(req: FastifyRequest, data: T, links: { self: string; parent: string }) {
  return { meta: baseMeta(req, 'object'), data, error: null, links };
}

/** List envelope with exact page arithmetic and absolute links (prev null on page 1, next null on the last). */
export function listBody<P extends Omit<Page<unknown>, 'items'> & { items: unknown }>(
  req: FastifyRequest,
  collectionUrl: string,
  page: P,
  extraQuery: Record<string, string> = {},
) {
  const pages = Math.max(1, Math.ceil(page.total / page.limit));
  // The filters are encoded once; page and limit are integers and need no encoding.
  const filters = new URLSearchParams(extraQuery).toString();
  const prefix = `${collectionUrl}?${filters ? `${filters}&` : ''}page=`;
  const limit = `&limit=${page.limit}`;
  const link = (n: number) => `${prefix}${n}${limit}`;
  return {
    // Object.assign, not a spread: a spread costs V8 far more on this hot path.
    meta: Object.assign(baseMeta(req, 'list'), { limit: page.limit, total: page.total, page: page.page, pages }),
    data: page.items as P['items'], // TypeScript reads a member of a constrained P as the constraint's type
    error: null,
    links: {
      self: link(page.page),
      first: link(1),
      prev: page.page > 1 ? link(Math.min(page.page - 1, pages)) : null,
      next: page.page < pages ? link(page.page + 1) : null,
      last: link(pages),
    },
  };
}

export function errorBody(
  req: FastifyRequest,
  selfUrl: string,
  error: { code: string; message: string; status: number; details?: unknown[] },
) {
  return { meta: baseMeta(req, 'error'), data: null, error, links: { self: selfUrl } };
}
