import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import type { paths } from '../../lib/api/schema';
import type { Data } from '../../lib/api/types';
import { Button } from '../../components/button';
import { DataTable } from '../../components/data-table';
import { EmptyState } from '../../components/empty-state';
import { ErrorBanner } from '../../components/error-banner';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { useToast } from '../../components/toast';
import { membershipOf, permissionsFor, useSignedIn } from '../../lib/session';
import './operations.css';

// The organisation's queue (GET /queue: per task kind, pending, delayed, processing, waiting,
// failed in 24 h, paused) with pause/resume per kind (POST /queue/kinds/{kind}/pause|resume), and
// the workers alive (GET /workers: host, pid, heartbeat, current tasks). Owners and admins only:
// the API refuses the others, so the page does not ask for them.

type KindRow = Data<'/queue', 'get'>['kinds'][number];
type Worker = Data<'/workers', 'get'>[number];
const REFRESH_MS = 3000;
type PausableKind = paths['/queue/kinds/{kind}/pause']['post']['parameters']['path']['kind'];
// Every kind the API pauses (a missing or extra one is a type error against schema.d.ts).
const PAUSABLE: Record<PausableKind, true> = {
  ingest: true,
  video: true,
  image: true,
  audio: true,
  thumbnails: true,
  speech: true,
  subtitles: true,
  chapters: true,
  nsfw: true,
  description: true,
  outline: true,
  prompt: true,
  workflow: true,
  conditions: true,
  http: true,
  adaptive_video: true,
};
const isPausable = (k: string): k is PausableKind => Object.hasOwn(PAUSABLE, k);

function ago(iso: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  return `${Math.floor(s / 3600)} h ago`;
}

function duration(s: number | undefined): string {
  if (s === undefined) return '—';
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

function PauseButton({ row, onDone }: { row: KindRow; onDone: () => void }) {
  const [busy, setBusy] = useState(false);
  const toast = useToast();
  const kind = row.kind;
  if (!isPausable(kind)) return null;
  const act = async () => {
    setBusy(true);
    try {
      if (row.paused) ok(await api.POST('/queue/kinds/{kind}/resume', { params: { path: { kind } } }));
      else ok(await api.POST('/queue/kinds/{kind}/pause', { params: { path: { kind } } }));
      toast({
        title: row.paused ? `${row.kind} resumed` : `${row.kind} paused`,
        description: row.paused
          ? 'Workers take its tasks again.'
          : 'Workers skip its tasks; new ones wait as pending, running ones finish.',
        tone: 'success',
      });
      onDone();
    } catch (e) {
      toast({
        title: 'Could not change the kind',
        description: e instanceof Error ? e.message : String(e),
        tone: 'error',
      });
    } finally {
      setBusy(false);
    }
  };
  return (
    <Button
      busy={busy}
      tone={row.paused ? 'primary' : 'default'}
      className="btn-small"
      onClick={act}
      aria-label={`${row.paused ? 'Resume' : 'Pause'} ${row.kind}`}
    >
      {row.paused ? 'Resume' : 'Pause'}
    </Button>
  );
}

export default function QueuePage() {
  const { projectId = '' } = useParams();
  const session = useSignedIn();
  const { canManage } = permissionsFor(membershipOf(session, projectId)?.role);
  const queue = useLoad(
    async () => (canManage ? ok(await api.GET('/queue')).data : null),
    `${projectId}:${canManage}`,
    REFRESH_MS,
  );
  const workers = useLoad(
    async () =>
      canManage
        ? { list: ok(await api.GET('/workers', { params: { query: { page: 1, limit: 100 } } })).data, at: Date.now() }
        : null,
    `${projectId}:${canManage}`,
    REFRESH_MS,
  );

  return (
    <div className="page">
      <PageHeader
        title="Queue and workers"
        description="Tasks waiting and running for every project of this organisation, by kind, and the worker processes taking them."
      />
      {!canManage ? (
        <div className="banner banner-warn" role="note">
          Only owners and admins of the organisation see the queue and pause or resume its kinds.
        </div>
      ) : (
        <>
          <section className="stack" aria-labelledby="queue-kinds">
            <h2 id="queue-kinds" className="h2">
              Kinds
            </h2>
            <ErrorBanner error={queue.error} onRetry={queue.reload} />
            {queue.loading ? (
              <Skeleton lines={6} label="Loading the queue" />
            ) : queue.data ? (
              <DataTable<KindRow>
                caption="Task kinds in the queue"
                rows={queue.data.kinds}
                rowKey={(k) => k.kind}
                columns={[
                  { key: 'kind', header: 'Kind', cell: (k) => <code>{k.kind}</code> },
                  {
                    key: 'state',
                    header: 'State',
                    cell: (k) =>
                      k.paused ? (
                        <span className="badge badge-warn" title={k.paused_at ? `since ${k.paused_at}` : undefined}>
                          Paused
                        </span>
                      ) : (
                        <span className="badge badge-ok">Running</span>
                      ),
                  },
                  { key: 'pending', header: 'Pending', className: 'num', cell: (k) => k.pending },
                  { key: 'delayed', header: 'Delayed', className: 'num', cell: (k) => k.delayed },
                  { key: 'processing', header: 'Processing', className: 'num', cell: (k) => k.processing },
                  { key: 'waiting', header: 'Waiting', className: 'num', cell: (k) => k.waiting },
                  { key: 'failed', header: 'Failed (24 h)', className: 'num', cell: (k) => k.failed },
                  {
                    key: 'oldest',
                    header: 'Oldest pending',
                    className: 'num',
                    cell: (k) => duration(k.oldest_pending_seconds),
                  },
                  {
                    key: 'act',
                    header: <span className="sr-only">Actions</span>,
                    cell: (k) => <PauseButton row={k} onDone={queue.reload} />,
                  },
                ]}
              />
            ) : null}
          </section>

          <section className="stack" aria-labelledby="queue-workers">
            <h2 id="queue-workers" className="h2">
              Workers
            </h2>
            <ErrorBanner error={workers.error} onRetry={workers.reload} />
            {workers.loading ? (
              <Skeleton lines={3} label="Loading workers" />
            ) : workers.data ? (
              <DataTable<Worker>
                caption="Workers alive"
                rows={workers.data.list}
                rowKey={(w) => w.id}
                empty={
                  <EmptyState
                    title="No worker is running"
                    description="Start one with mediad worker (or mediad serve with its workers); tasks wait as pending until then."
                  />
                }
                columns={[
                  {
                    key: 'host',
                    header: 'Worker',
                    cell: (w) => (
                      <span>
                        <strong>{w.host}</strong> <span className="muted">pid {w.pid}</span>
                      </span>
                    ),
                  },
                  { key: 'concurrency', header: 'Concurrency', className: 'num', cell: (w) => w.concurrency },
                  { key: 'started', header: 'Started', cell: (w) => <Time iso={w.started} /> },
                  {
                    key: 'beat',
                    header: 'Heartbeat',
                    cell: (w) => (
                      <time dateTime={w.last_heartbeat} title={w.last_heartbeat}>
                        {ago(w.last_heartbeat, workers.data?.at ?? Date.parse(w.last_heartbeat))}
                      </time>
                    ),
                  },
                  {
                    key: 'current',
                    header: 'Current tasks',
                    cell: (w) =>
                      w.current_tasks.length === 0 ? (
                        <span className="muted">idle</span>
                      ) : (
                        <ul className="plain">
                          {w.current_tasks.map((t) => (
                            <li key={t.id}>
                              {t.kind}{' '}
                              {t.project_id === projectId ? (
                                <Link to={`/p/${projectId}/tasks?task=${t.id}`}>
                                  <code>{t.id}</code>
                                </Link>
                              ) : (
                                <code title={`project ${t.project_id}`}>{t.id}</code>
                              )}
                            </li>
                          ))}
                        </ul>
                      ),
                  },
                ]}
              />
            ) : null}
          </section>
        </>
      )}
    </div>
  );
}
