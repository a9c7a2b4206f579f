import { useRef, type FormEvent, useEffect } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import { Button } from '../../components/button';
import { CopyAsCurl } from '../../components/copy-as-curl';
import { DataTable } from '../../components/data-table';
import { EmptyState } from '../../components/empty-state';
import { ErrorBanner } from '../../components/error-banner';
import { formatBytes } from '../../lib/format';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { membershipOf, permissionsFor, useSignedIn } from '../../lib/session';
import { MediaCard, MediaThumb, titleOf } from './card';
import { formatDuration, originalOf } from './files';
import type { Media } from '../../lib/api/objects';
import { AddFromUrl, DropZone, UploadList, useUploads } from './upload';
import './media.css';
import { PlainOptions } from '../../components/plain-options';

// The media library: grid or list, filters and search kept in the URL (so reload, back and links
// keep them), page numbers over GET /media (exact totals: a kept counter when unfiltered, indexed
// counts otherwise), uploads by drag and drop and from a URL.

const KINDS = ['video', 'image', 'audio'] as const;
const STATUSES = ['ready', 'processing', 'failed'] as const;
const PAGE_SIZE = 24;

function pick<T extends string>(values: readonly T[], v: string | null): T | undefined {
  return values.find((x) => x === v);
}

/** A yyyy-mm-dd from a date input as the start (or the end) of that day, UTC. */
function dayBound(day: string | null, end: boolean): string | undefined {
  if (!day || !/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined;
  const t = Date.parse(`${day}T00:00:00.000Z`);
  if (!Number.isFinite(t)) return undefined;
  return new Date(end ? t + 86_400_000 : t).toISOString();
}

const FIRST_PAGE_MARK = 'mediad:library-first-page';

export default function MediaLibraryPage() {
  const { projectId = '' } = useParams();
  const session = useSignedIn();
  const { canWrite } = permissionsFor(membershipOf(session, projectId)?.role);
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const view = params.get('view') === 'list' ? 'list' : 'grid';
  const page = Math.max(1, Number.parseInt(params.get('page') ?? '1', 10) || 1);
  const filter = {
    kind: pick(KINDS, params.get('kind')),
    status: pick(STATUSES, params.get('status')),
    folder: params.get('folder') || undefined,
    ref: params.get('ref') || undefined,
    q: params.get('q') || undefined,
    created_after: dayBound(params.get('from'), false),
    created_before: dayBound(params.get('to'), true),
  };
  const query = Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined));
  const list = useLoad(
    async () => ok(await api.GET('/media', { params: { query: { ...filter, page, limit: PAGE_SIZE } } })),
    `${projectId}?${JSON.stringify(query)}&page=${page}`,
  );
  const uploads = useUploads(list.reload);
  const projectPath = `/p/${projectId}`;

  /** Changes URL parameters (empty values removed); any filter change goes back to page 1. */
  const update = (changes: Record<string, string | null>, keepPage = false) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    if (!keepPage) next.delete('page');
    setParams(next);
  };

  // A User Timing mark when the first page of media is on screen (the browser test reads it).
  const shown = list.data !== undefined;
  useEffect(() => {
    if (shown && performance.getEntriesByName(FIRST_PAGE_MARK).length === 0) performance.mark(FIRST_PAGE_MARK);
  }, [shown]);

  const total = list.data?.meta.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const items: Media[] = list.data?.data ?? [];
  const filtered = Object.keys(query).length > 0;

  return (
    <div className="page page-wide">
      <PageHeader
        title="Media"
        description="Everything stored in this project. Filters and search stay in the address, so links keep them."
        actions={
          <>
            <CopyAsCurl path={`/media?limit=${PAGE_SIZE}`} />
            {canWrite ? <AddFromUrl onAdded={(id) => navigate(`${projectPath}/media/${id}`)} /> : null}
          </>
        }
      />
      {canWrite ? (
        <>
          <DropZone onFiles={uploads.start} focus={params.get('upload') === '1'} />
          <UploadList
            uploads={uploads.uploads}
            projectPath={projectPath}
            onClear={uploads.clear}
            onPause={uploads.pause}
            onResume={uploads.resume}
          />
        </>
      ) : null}
      <Filters params={params} update={update} />
      <div className="library-bar">
        <p className="muted" aria-live="polite" data-testid="media-total">
          {list.loading ? 'Loading…' : `${total.toLocaleString()} media${filtered ? ' match' : ''}`}
        </p>
        <div className="segmented" role="group" aria-label="View">
          <button type="button" aria-pressed={view === 'grid'} onClick={() => update({ view: null }, true)}>
            Grid
          </button>
          <button type="button" aria-pressed={view === 'list'} onClick={() => update({ view: 'list' }, true)}>
            List
          </button>
        </div>
      </div>
      <ErrorBanner error={list.error} onRetry={list.reload} />
      {list.loading && !list.data ? (
        <Skeleton lines={6} label="Loading media" />
      ) : items.length === 0 ? (
        <EmptyState
          title={filtered ? 'No media match these filters' : 'No media yet'}
          description={
            filtered ? 'Change or clear the filters.' : canWrite ? 'Drop files above to upload them.' : undefined
          }
          action={
            filtered ? (
              <Button onClick={() => setParams(new URLSearchParams(view === 'list' ? { view } : {}))}>
                Clear filters
              </Button>
            ) : undefined
          }
        />
      ) : view === 'grid' ? (
        <ul className="media-grid" aria-label="Media">
          {items.map((m) => (
            <MediaCard key={m.id} media={m} to={`${projectPath}/media/${m.id}`} />
          ))}
        </ul>
      ) : (
        <DataTable<Media>
          caption="Media"
          rows={items}
          rowKey={(m) => m.id}
          columns={[
            {
              key: 'thumb',
              header: <span className="sr-only">Thumbnail</span>,
              cell: (m) => (
                <div className="list-thumb">
                  <MediaThumb media={m} />
                </div>
              ),
            },
            {
              key: 'title',
              header: 'Title',
              cell: (m) => <Link to={`${projectPath}/media/${m.id}`}>{titleOf(m)}</Link>,
            },
            { key: 'kind', header: 'Kind', cell: (m) => m.kind ?? '—' },
            {
              key: 'size',
              header: 'Size',
              className: 'num',
              cell: (m) => {
                const f = originalOf(m);
                return f ? formatBytes(f.filesize) : '—';
              },
            },
            { key: 'dims', header: 'Dimensions', cell: (m) => (m.width && m.height ? `${m.width}×${m.height}` : '—') },
            {
              key: 'duration',
              header: 'Duration',
              cell: (m) => (m.duration !== undefined ? formatDuration(m.duration) : '—'),
            },
            { key: 'files', header: 'Files', className: 'num', cell: (m) => m.files.length },
            { key: 'created', header: 'Created', cell: (m) => <Time iso={m.created} /> },
          ]}
        />
      )}
      {total > PAGE_SIZE ? (
        <nav className="library-pager" aria-label="Pages">
          <Button disabled={page <= 1} onClick={() => update({ page: null }, true)}>
            First
          </Button>
          <Button disabled={page <= 1} onClick={() => update({ page: page - 1 > 1 ? String(page - 1) : null }, true)}>
            Previous
          </Button>
          <span aria-current="page">
            Page {page.toLocaleString()} of {pages.toLocaleString()}
          </span>
          <Button disabled={page >= pages} onClick={() => update({ page: String(page + 1) }, true)}>
            Next
          </Button>
          <Button disabled={page >= pages} onClick={() => update({ page: String(pages) }, true)}>
            Last
          </Button>
        </nav>
      ) : null}
    </div>
  );
}

function Filters({
  params,
  update,
}: {
  params: URLSearchParams;
  update: (changes: Record<string, string | null>) => void;
}) {
  const form = useRef<HTMLFormElement>(null);
  const text = (name: string) => params.get(name) ?? '';
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    const changes: Record<string, string | null> = {};
    for (const name of ['q', 'folder', 'ref']) {
      const v = data.get(name);
      changes[name] = typeof v === 'string' && v.trim() ? v.trim() : null;
    }
    update(changes);
  };
  // The key remounts the uncontrolled inputs when the URL changes (back, a link, "clear").
  return (
    <form
      ref={form}
      key={params.toString()}
      className="filters"
      role="search"
      aria-label="Filter media"
      onSubmit={submit}
    >
      <div className="field filter-q">
        <label htmlFor="f-q">Search</label>
        <input
          id="f-q"
          name="q"
          type="search"
          defaultValue={text('q')}
          placeholder="Title, filename or id (med_…, file_…)"
        />
      </div>
      <div className="field">
        <label htmlFor="f-kind">Kind</label>
        <select id="f-kind" value={text('kind')} onChange={(e) => update({ kind: e.target.value || null })}>
          <PlainOptions any="Any" values={KINDS} />
        </select>
      </div>
      <div className="field">
        <label htmlFor="f-status">Status</label>
        <select id="f-status" value={text('status')} onChange={(e) => update({ status: e.target.value || null })}>
          <PlainOptions any="Any" values={STATUSES} />
        </select>
      </div>
      <div className="field">
        <label htmlFor="f-folder">Folder</label>
        <input id="f-folder" name="folder" defaultValue={text('folder')} placeholder="uploads" />
      </div>
      <div className="field">
        <label htmlFor="f-ref">Ref</label>
        <input id="f-ref" name="ref" defaultValue={text('ref')} placeholder="original" />
      </div>
      <div className="field">
        <label htmlFor="f-from">Created from</label>
        <input
          id="f-from"
          type="date"
          value={text('from')}
          onChange={(e) => update({ from: e.target.value || null })}
        />
      </div>
      <div className="field">
        <label htmlFor="f-to">Created to</label>
        <input id="f-to" type="date" value={text('to')} onChange={(e) => update({ to: e.target.value || null })} />
      </div>
      <div className="filter-actions">
        <Button type="submit" tone="primary">
          Apply
        </Button>
      </div>
    </form>
  );
}
