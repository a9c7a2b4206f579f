import { useId } from 'react';
import { Link } from 'react-router';
import { api, ok } from '../../lib/api/client';
import type { Data } from '../../lib/api/types';
import { CopyButton } from '../../components/copy-button';
import { DataTable } from '../../components/data-table';
import { EmptyState } from '../../components/empty-state';
import { ErrorBanner } from '../../components/error-banner';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { Pager, useListParams, withParam } from '../../components/pager';
import { curlWithCa, useCaFile } from '../../lib/local-ca';
import './operations.css';
import { PlainOptions } from '../../components/plain-options';

// The project's request log (GET /requests): newest first, a status-class filter and the page in
// the URL, one request opened by ?request=req_… (GET /requests/{id}). "Copy as curl" rebuilds the
// call from the row's method and public URL (the API already replaced secret query values with
// REDACTED) and always names the key as $MEDIAD_API_KEY: the log holds no key, header or body.

export type RequestRow = Data<'/requests', 'get'>[number];
const LIMIT = 50;
const CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;
type StatusClass = (typeof CLASSES)[number];
const isClass = (v: string | null): v is StatusClass => CLASSES.some((c) => c === v);

/** Single-quoted for a POSIX shell. */
function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** The curl command for a logged request; the key is always the $MEDIAD_API_KEY placeholder. */
export function curlForRequest(r: Pick<RequestRow, 'method' | 'url'>, caFile: string | null | undefined): string {
  const method = r.method === 'GET' ? '' : r.method === 'HEAD' ? ' --head' : ` -X ${r.method}`;
  const body =
    r.method === 'POST' || r.method === 'PUT' || r.method === 'PATCH'
      ? ` -H "Content-Type: application/json" -d @request.json`
      : '';
  return `${curlWithCa(caFile)}${method} -H "Authorization: Bearer $MEDIAD_API_KEY"${body} ${shellQuote(r.url)}`;
}

function statusTone(status: number): string {
  if (status >= 500) return 'badge badge-danger';
  if (status >= 400) return 'badge badge-warn';
  return 'badge badge-ok';
}

function Who({ r }: { r: RequestRow }) {
  if (r.key)
    return <span title={r.key.id}>key {r.key.name ? <strong>{r.key.name}</strong> : <code>{r.key.id}</code>}</span>;
  if (r.user) return <span title={r.user.id}>{r.user.email ?? r.user.id}</span>;
  return <span className="muted">{r.actor === 'signed_url' ? 'signed URL' : r.actor}</span>;
}

function RequestDetail({ r }: { r: RequestRow }) {
  const caFile = useCaFile();
  const body = r.method === 'POST' || r.method === 'PUT' || r.method === 'PATCH';
  return (
    <section className="card stack" aria-label={`Request ${r.id}`} data-request-detail={r.id}>
      <h2 className="h2">
        <span className="badge">{r.method}</span> <code>{r.path}</code>
      </h2>
      <dl className="facts">
        <dt>Request id</dt>
        <dd>
          <code>{r.id}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <span className={statusTone(r.status)}>{r.status}</span>
        </dd>
        <dt>Latency</dt>
        <dd>{r.duration_ms.toFixed(1)} ms</dd>
        <dt>When</dt>
        <dd>
          <Time iso={r.created} />
        </dd>
        <dt>By</dt>
        <dd>
          <Who r={r} />
        </dd>
        {r.route ? (
          <>
            <dt>Route</dt>
            <dd>
              <code>{r.route}</code>
            </dd>
          </>
        ) : null}
        <dt>URL</dt>
        <dd>
          <code className="wrap">{r.url}</code>
        </dd>
      </dl>
      {/* Shown once the CA file is known: without it the command would lack --cacert. */}
      {caFile === undefined ? null : (
        <pre className="json" data-curl>
          {curlForRequest(r, caFile)}
        </pre>
      )}
      <p className="small muted">
        The log keeps no headers, bodies or keys: the command uses <code>$MEDIAD_API_KEY</code>
        {body ? ' and reads the body (not logged) from request.json' : ''}; secret query values show as{' '}
        <code>REDACTED</code>.
      </p>
      <div className="row">
        {caFile === undefined ? null : <CopyButton value={curlForRequest(r, caFile)} label="Copy as curl" />}
      </div>
    </section>
  );
}

export default function RequestsPage() {
  const { projectId, params, setParams, page, openId: requestId, hrefFor } = useListParams('request');
  const cls = params.get('status_class');
  const statusClass = isClass(cls) ? cls : undefined;
  const selectId = useId();

  const list = useLoad(
    async () =>
      ok(
        await api.GET('/requests', {
          params: { query: { page, limit: LIMIT, ...(statusClass ? { status_class: statusClass } : {}) } },
        }),
      ),
    JSON.stringify([projectId, statusClass, page]),
  );
  const one = useLoad(
    async () => (requestId ? ok(await api.GET('/requests/{id}', { params: { path: { id: requestId } } })).data : null),
    `${projectId}:${requestId}`,
  );

  const openHref = (id: string) => {
    const next = new URLSearchParams(params);
    next.set('request', id);
    return `?${next.toString()}`;
  };

  return (
    <div className="page">
      <PageHeader
        title="Request log"
        description="The API requests made to this project, newest first: who made them, the answer and how long it took."
      />
      <div className="row">
        <label htmlFor={selectId}>Status</label>
        <select
          id={selectId}
          className="obs-select"
          value={statusClass ?? ''}
          onChange={(e) => setParams((prev) => withParam(prev, 'status_class', e.target.value, ['page', 'request']))}
        >
          <PlainOptions any="All statuses" values={CLASSES} />
        </select>
        <button type="button" className="btn btn-small" onClick={list.reload}>
          Refresh
        </button>
      </div>

      {requestId ? (
        <div className="stack">
          <ErrorBanner error={one.error} />
          {one.data ? <RequestDetail r={one.data} /> : one.loading ? <Skeleton lines={3} /> : null}
        </div>
      ) : null}

      <ErrorBanner error={list.error} onRetry={list.reload} />
      {list.loading ? (
        <Skeleton lines={8} label="Loading requests" />
      ) : list.data ? (
        <>
          <DataTable
            caption="Requests"
            rows={list.data.data}
            rowKey={(r) => r.id}
            empty={
              <EmptyState
                title={statusClass ? `No ${statusClass} requests` : 'No requests yet'}
                description="Requests appear here a moment after they are made."
              />
            }
            columns={[
              { key: 'time', header: 'Time', cell: (r) => <Time iso={r.created} /> },
              { key: 'method', header: 'Method', cell: (r) => <span className="badge">{r.method}</span> },
              { key: 'path', header: 'Path', cell: (r) => <code className="wrap">{r.path}</code> },
              {
                key: 'status',
                header: 'Status',
                cell: (r) => (
                  <span className={statusTone(r.status)} data-status>
                    {r.status}
                  </span>
                ),
              },
              { key: 'latency', header: 'Latency', className: 'num', cell: (r) => `${r.duration_ms.toFixed(1)} ms` },
              { key: 'who', header: 'Key or user', cell: (r) => <Who r={r} /> },
              {
                key: 'id',
                header: 'Request id',
                cell: (r) => (
                  <Link to={openHref(r.id)}>
                    <code>{r.id}</code>
                  </Link>
                ),
              },
            ]}
          />
          <Pager meta={list.data.meta} hrefFor={hrefFor} />
        </>
      ) : null}
    </div>
  );
}
