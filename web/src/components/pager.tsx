import { Link, useParams, useSearchParams } from 'react-router';
import './pager.css';

// Paged lists keep their filters, page and open item in the URL (shareable, back-button safe).
// These build those URLs, so every list pages and filters alike.

/** The page the URL names: a whole number from 1 (anything else is page 1). */
export function pageOf(params: URLSearchParams): number {
  return Math.max(1, Math.floor(Number(params.get('page'))) || 1);
}

/** The URL's query with `name` set to `value` (removed when empty) and the `drop` names removed. */
export function withParam(
  prev: URLSearchParams,
  name: string,
  value: string | null | undefined,
  drop: readonly string[] = ['page'],
): URLSearchParams {
  const next = new URLSearchParams(prev);
  if (value) next.set(name, value);
  else next.delete(name);
  for (const d of drop) next.delete(d);
  return next;
}

/** A link's `?query` for page `p` of the list (page 1 has no `page`), without the `drop` names. */
export function pageHref(params: URLSearchParams, p: number, drop: readonly string[] = []): string {
  return `?${withParam(params, 'page', p > 1 ? String(p) : null, drop).toString()}`;
}

/**
 * A paged list's URL state: the project, the query, the page, the item opened with `?<open>=id`,
 * and page links (which close that item).
 */
export function useListParams(open: string) {
  const { projectId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const hrefFor = (p: number) => pageHref(params, p, [open]);
  return { projectId, params, setParams, page: pageOf(params), openId: params.get(open), hrefFor };
}

/** Newer/older links and where the list stands; a single page says only how many items there are. */
export function Pager({
  meta: { page, pages, total },
  hrefFor,
  noun = ['item', 'items'],
}: {
  /** The list answer's `meta`. */
  meta: { page: number; pages: number; total: number };
  hrefFor: (page: number) => string;
  /** Singular and plural of what is listed. */
  noun?: [string, string];
}) {
  if (pages <= 1) return <p className="muted small">{total === 1 ? `1 ${noun[0]}` : `${total} ${noun[1]}`}</p>;
  return (
    <nav className="pager" aria-label="Pages">
      {page > 1 ? <Link to={hrefFor(page - 1)}>← Newer</Link> : <span className="muted">← Newer</span>}
      <span>
        Page {page} of {pages} ({total} in all)
      </span>
      {page < pages ? <Link to={hrefFor(page + 1)}>Older →</Link> : <span className="muted">Older →</span>}
    </nav>
  );
}
