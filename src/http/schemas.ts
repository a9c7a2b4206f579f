import { Type, type Static, type TProperties, type TSchema } from 'typebox';
import { Metadata, Nullable } from '../schemas.js';

export { Metadata, Nullable };

// Wire schemas shared by every resource: the envelope of SPEC 2.1, list metadata,
// error bodies and the pagination query. Response schemas also act as an allow-list:
// fast-json-stringify drops any column not named here, so internals never leak.

export const ObjectMeta = Type.Object({
  request_id: Type.String(),
  org_id: Nullable(Type.String()),
  project_id: Nullable(Type.String()),
  version: Type.String(),
  type: Type.String(),
});

export const ListMeta = Type.Object({
  request_id: Type.String(),
  org_id: Nullable(Type.String()),
  project_id: Nullable(Type.String()),
  version: Type.String(),
  type: Type.Literal('list'),
  limit: Type.Integer(),
  total: Type.Integer(),
  page: Type.Integer(),
  pages: Type.Integer(),
});

export const ObjectLinks = Type.Object({ self: Type.String(), parent: Type.String() });

export const ListLinks = Type.Object({
  self: Type.String(),
  first: Type.String(),
  prev: Nullable(Type.String()),
  next: Nullable(Type.String()),
  last: Type.String(),
});

export const ErrorBody = Type.Object({
  code: Type.String(),
  message: Type.String(),
  status: Type.Integer(),
  details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
});

export const ErrorEnvelope = Type.Object({
  meta: ObjectMeta,
  data: Type.Null(),
  error: ErrorBody,
  links: Type.Object({ self: Type.String() }),
});

export function objectEnvelope<T extends TSchema>(data: T) {
  return Type.Object({ meta: ObjectMeta, data, error: Type.Null(), links: ObjectLinks });
}

export function listEnvelope<T extends TSchema>(item: T) {
  return Type.Object({ meta: ListMeta, data: Type.Array(item), error: Type.Null(), links: ListLinks });
}

/**
 * The largest page asked for. Pages past the last are answered (empty), but the offset
 * (page - 1) × limit must stay an exact integer that SQLite and PostgreSQL accept: 1e20
 * reached SQLite as a float and failed as a 500.
 */
export const MAX_PAGE = 1_000_000_000;

/**
 * SPEC 4.2 / 8: page 1..MAX_PAGE (default 1), limit 1..100 (default per resource), and a list's
 * own filters (`extra`), which keep their types in the route's `req.query`.
 */
export function pageQuery<E extends TProperties>(defaultLimit: number, extra: E) {
  return Type.Object(
    {
      page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
      limit: Type.Integer({ minimum: 1, maximum: 100, default: defaultLimit }),
      ...extra,
    },
    { additionalProperties: true },
  );
}

/** A list's query without filters of its own. */
export const plainPageQuery = (defaultLimit: number) => pageQuery(defaultLimit, {});

/**
 * An id in a path: what newId() makes (prefix_ and base62). Anything else is refused here,
 * before a query: PostgreSQL fails on U+0000 in text, which made /files/%00 a 500 there.
 */
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$' }) });
export type IdParams = Static<typeof IdParams>;

/** The common error answers every authenticated route can give. */
export const errorResponses = {
  '4xx': ErrorEnvelope,
  '5xx': ErrorEnvelope,
};
