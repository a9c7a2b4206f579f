import { Dialog } from 'radix-ui';
import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import { pageOf } from '../../components/pager';
import type { operations } from '../../lib/api/schema';
import type { Data, Task } from '../../lib/api/types';
import { useToast } from '../../components/toast';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { CopyAsCurl } from '../../components/copy-as-curl';
import { CopyButton } from '../../components/copy-button';
import { DataTable, type Column } from '../../components/data-table';
import { EmptyState } from '../../components/empty-state';
import { ErrorBanner } from '../../components/error-banner';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { membershipOf, permissionsFor, useSignedIn } from '../../lib/session';
import './tasks.css';
import { isRecord } from '../../lib/guards';

// Tasks (/app/p/:projectId/tasks): a live list of the project's tasks (GET /tasks polled every
// 2 s while the tab is visible), filtered by status, kind, media and automation (kept in the URL
// with the page and the open task), progress of running tasks, failures with their code, message
// and attempts; cancel, retry, and retry every failed task of the filter; a drawer with one task's
// input, options, output, timings and "copy as curl". Viewers get no action buttons.

type ListQuery = NonNullable<operations['listTasks']['parameters']['query']>;
type Status = NonNullable<ListQuery['status']>;
type Kind = NonNullable<ListQuery['kind']>;
type RetryResult = Data<'/tasks/retry', 'post'>;

const STATUS_LABELS: Record<Status, string> = {
  pending: 'Pending',
  processing: 'Processing',
  waiting: 'Waiting',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};
// Every kind the API filters by (a missing or extra one is a type error against schema.d.ts).
const KIND_LABELS: Record<Kind, string> = {
  ingest: 'ingest',
  video: 'video',
  image: 'image',
  audio: 'audio',
  thumbnails: 'thumbnails',
  speech: 'speech',
  subtitles: 'subtitles',
  chapters: 'chapters',
  nsfw: 'nsfw',
  description: 'description',
  outline: 'outline',
  prompt: 'prompt',
  workflow: 'workflow',
  conditions: 'conditions',
  http: 'http',
};
const isStatus = (s: string | null): s is Status => s !== null && Object.hasOwn(STATUS_LABELS, s);
const isKind = (s: string | null): s is Kind => s !== null && Object.hasOwn(KIND_LABELS, s);
const STATUSES = Object.keys(STATUS_LABELS).filter(isStatus);
const KINDS = Object.keys(KIND_LABELS).filter(isKind);

const LIMIT = 25;
const POLL_MS = 2000;
const FINAL = new Set(['completed', 'failed', 'cancelled']);
const CANCELLABLE = new Set(['pending', 'processing', 'waiting']);
const RETRYABLE = new Set(['failed', 'cancelled']);

/** Whether the tab is visible: live views stop polling while it is hidden. */
function usePageVisible(): boolean {
  const [visible, setVisible] = useState(() => document.visibilityState !== 'hidden');
  useEffect(() => {
    const update = () => setVisible(document.visibilityState !== 'hidden');
    document.addEventListener('visibilitychange', update);
    return () => document.removeEventListener('visibilitychange', update);
  }, []);
  return visible;
}

/** A load that repeats every `ms` while the tab is visible (and at once when it comes back). */
function useLiveLoad<T>(load: () => Promise<T>, key: string, live: boolean) {
  const visible = usePageVisible();
  const loaded = useLoad(load, key, visible && live ? POLL_MS : undefined);
  const { reload } = loaded;
  const [wasVisible, setWasVisible] = useState(visible);
  if (visible !== wasVisible) {
    setWasVisible(visible);
    if (visible) reload();
  }
  return loaded;
}

function str(o: unknown, key: string): string | undefined {
  return isRecord(o) && typeof o[key] === 'string' ? o[key] : undefined;
}

/** A duration between two ISO times, short. */
function formatDuration(from: string | undefined, to: string | undefined): string | null {
  if (!from || !to) return null;
  const ms = Date.parse(to) - Date.parse(from);
  if (!Number.isFinite(ms) || ms < 0) return null;
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

function StatusBadge({ status }: { status: string }) {
  const tone =
    status === 'completed'
      ? 'badge-ok'
      : status === 'failed'
        ? 'badge-danger'
        : status === 'processing'
          ? 'badge-warn'
          : '';
  return <span className={`badge ${tone}`}>{isStatus(status) ? STATUS_LABELS[status] : status}</span>;
}

function Progress({ task }: { task: Task }) {
  if (task.status !== 'processing') return null;
  return (
    <div className="task-progress">
      <progress value={task.progress} max={100} aria-label={`Progress of ${task.id}`} />
      <span className="small muted">{task.progress}%</span>
    </div>
  );
}

function Failure({ task }: { task: Task }) {
  if (task.status !== 'failed') return null;
  return (
    <div className="task-error">
      <code>{task.error_code ?? 'failed'}</code> <span>{task.error ?? 'The task failed.'}</span>
    </div>
  );
}

/** Where a task's input or output is: its media (a link to it), its file, or a URL. */
function Place({ value, projectId }: { value: unknown; projectId: string }) {
  const mediaId = str(value, 'media_id');
  const fileId = str(value, 'id');
  const url = str(value, 'url');
  if (!mediaId && !fileId && !url) return <span className="muted">—</span>;
  return (
    <span className="task-place">
      {mediaId ? <Link to={`/p/${projectId}/media/${mediaId}`}>{mediaId}</Link> : null}
      {fileId ? <code className="small">{fileId}</code> : null}
      {!mediaId && !fileId && url ? <span className="small task-url">{url}</span> : null}
    </span>
  );
}

/** Cancel and retry, as buttons (the list's rows and the drawer). */
function TaskActions({ task, onChanged }: { task: Task; onChanged: () => void }) {
  const toast = useToast();
  const [busy, setBusy] = useState<'cancel' | 'retry' | null>(null);
  const run = async (what: 'cancel' | 'retry') => {
    setBusy(what);
    try {
      const params = { params: { path: { id: task.id } } };
      if (what === 'cancel') {
        ok(await api.POST('/tasks/{id}/cancel', params));
        toast({ title: `Task ${task.id} cancelled`, tone: 'success' });
      } else {
        const again = ok(await api.POST('/tasks/{id}/retry', params)).data;
        toast({ title: `Task ${task.id} retried`, description: `It runs again as ${again.id}.`, tone: 'success' });
      }
      onChanged();
    } catch (err) {
      const e = err instanceof Error ? err.message : String(err);
      toast({
        title: what === 'cancel' ? 'Could not cancel the task' : 'Could not retry the task',
        description: e,
        tone: 'error',
      });
    } finally {
      setBusy(null);
    }
  };
  const cancellable = CANCELLABLE.has(task.status);
  const retryable = RETRYABLE.has(task.status) && !task.parent_id;
  if (!cancellable && !retryable) return null;
  return (
    <div className="row task-actions">
      {cancellable ? (
        <Button
          className="btn-small"
          busy={busy === 'cancel'}
          onClick={() => run('cancel')}
          aria-label={`Cancel ${task.id}`}
        >
          Cancel
        </Button>
      ) : null}
      {retryable ? (
        <Button
          className="btn-small"
          busy={busy === 'retry'}
          onClick={() => run('retry')}
          aria-label={`Retry ${task.id}`}
        >
          Retry
        </Button>
      ) : null}
    </div>
  );
}

interface Filter {
  status: Status | undefined;
  kind: Kind | undefined;
  media_id: string | undefined;
  automation_id: string | undefined;
}

function describeFilter(f: Filter): string {
  const parts = [
    f.kind ? `of kind ${f.kind}` : null,
    f.media_id ? `of media ${f.media_id}` : null,
    f.automation_id ? `started by automation ${f.automation_id}` : null,
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'of this project';
}

function RetryAllResult({ result, onClose }: { result: RetryResult; onClose: () => void }) {
  return (
    <div className={`banner ${result.errors.length ? 'banner-warn' : 'banner-success'}`} role="status">
      <div>
        <strong>
          {result.retried === 1 ? 'Retried 1 failed task.' : `Retried ${result.retried} failed tasks.`}
          {result.errors.length ? ` ${result.errors.length} could not be retried:` : ''}
        </strong>
        {result.more ? <p>More failed tasks are left than one retry takes: retry again for the next ones.</p> : null}
        {result.errors.length ? (
          <ul>
            {result.errors.map((e) => (
              <li key={e.task_id}>
                <code>{e.task_id}</code>: <code>{e.code}</code> {e.message}
              </li>
            ))}
          </ul>
        ) : null}
      </div>
      <button type="button" className="btn btn-small" onClick={onClose} aria-label="Dismiss the retry result">
        ×
      </button>
    </div>
  );
}

export default function TasksPage() {
  const { projectId = '' } = useParams();
  const session = useSignedIn();
  const { canWrite } = permissionsFor(membershipOf(session, projectId)?.role);
  const [params, setParams] = useSearchParams();
  const [retryResult, setRetryResult] = useState<RetryResult | null>(null);

  const filter: Filter = {
    status: ((s) => (isStatus(s) ? s : undefined))(params.get('status')),
    kind: ((k) => (isKind(k) ? k : undefined))(params.get('kind')),
    media_id: params.get('media_id')?.trim() || undefined,
    automation_id: params.get('automation_id')?.trim() || undefined,
  };
  const page = pageOf(params);
  const openTask = params.get('task');
  const key = JSON.stringify([projectId, filter, page]);

  const list = useLiveLoad(
    async () => ok(await api.GET('/tasks', { params: { query: { ...filter, page, limit: LIMIT } } })),
    key,
    true,
  );

  /** Changes URL parameters (a filter change goes back to page 1). */
  const update = (changes: Record<string, string | undefined>, keepPage = false) => {
    setParams((prev) => {
      const next = new URLSearchParams(prev);
      for (const [k, v] of Object.entries(changes)) {
        if (v) next.set(k, v);
        else next.delete(k);
      }
      if (!keepPage && !('page' in changes)) next.delete('page');
      return next;
    });
  };
  const taskLink = (id: string) => {
    const next = new URLSearchParams(params);
    next.set('task', id);
    return `?${next.toString()}`;
  };

  const rows = list.data?.data ?? [];
  // A failed task retried since: its retry (when it is on this page) is linked from its row.
  const retriedAs = new Map<string, string>();
  for (const t of rows) if (t.retry_of) retriedAs.set(t.retry_of, t.id);
  const filtered = Object.values(filter).some((v) => v !== undefined);

  const columns: Column<Task>[] = [
    {
      key: 'task',
      header: 'Task',
      cell: (t) => (
        <div className="task-stack">
          <Link to={taskLink(t.id)} className="task-id">
            {t.id}
          </Link>
          <span className="small muted">{t.kind}</span>
        </div>
      ),
    },
    {
      key: 'status',
      header: 'Status',
      cell: (t) => (
        <div className="task-stack">
          <StatusBadge status={t.status} />
          <Progress task={t} />
          <Failure task={t} />
          {retriedAs.has(t.id) ? (
            <span className="small muted">
              Retried as <Link to={taskLink(retriedAs.get(t.id) ?? '')}>{retriedAs.get(t.id)}</Link>
            </span>
          ) : null}
        </div>
      ),
    },
    { key: 'attempts', header: 'Attempts', className: 'num', cell: (t) => t.attempts },
    { key: 'input', header: 'Input', cell: (t) => <Place value={t.input} projectId={projectId} /> },
    { key: 'created', header: 'Created', className: 'task-nowrap', cell: (t) => <Time iso={t.created} /> },
    {
      key: 'took',
      header: 'Took',
      className: 'task-nowrap',
      cell: (t) =>
        formatDuration(t.started, t.finished) ??
        (t.started && !t.finished ? <span className="muted">running</span> : '—'),
    },
    ...(canWrite
      ? [
          {
            key: 'actions',
            header: <span className="sr-only">Actions</span>,
            cell: (t: Task) => <TaskActions task={t} onChanged={list.reload} />,
          },
        ]
      : []),
  ];

  const meta = list.data?.meta;
  return (
    <div className="page">
      <PageHeader
        title="Tasks"
        description="Every task of this project, newest first. The list updates by itself while this tab is open."
        actions={
          canWrite ? (
            <ConfirmDialog
              trigger={<Button>Retry all failed</Button>}
              title="Retry all failed tasks"
              description={
                <p>
                  Every failed task {describeFilter(filter)} runs again as a new task (at most 1,000, oldest first). A
                  task that was retried before is not retried again.
                </p>
              }
              confirmLabel="Retry failed tasks"
              tone="primary"
              onConfirm={async () => {
                const { status: _all, ...body } = filter;
                setRetryResult(ok(await api.POST('/tasks/retry', { body })).data);
                list.reload();
              }}
            />
          ) : null
        }
      />

      <Filters filter={filter} onChange={update} />

      {retryResult ? <RetryAllResult result={retryResult} onClose={() => setRetryResult(null)} /> : null}
      <ErrorBanner error={list.error} onRetry={list.reload} />

      {list.loading ? (
        <Skeleton lines={6} label="Loading tasks" />
      ) : list.data ? (
        <>
          <DataTable
            caption="Tasks"
            columns={columns}
            rows={rows}
            rowKey={(t) => t.id}
            empty={
              <EmptyState
                title={filtered ? 'No task matches these filters' : 'No tasks yet'}
                description={
                  filtered
                    ? 'Change or clear the filters to see more.'
                    : 'Tasks appear here when you run one on a media, an automation starts one, or a client calls POST /tasks.'
                }
                action={
                  filtered ? <Button onClick={() => setParams(new URLSearchParams())}>Clear filters</Button> : undefined
                }
              />
            }
          />
          {meta && meta.pages > 1 ? (
            <nav className="task-pager" aria-label="Pages">
              <Button disabled={meta.page <= 1} onClick={() => update({ page: String(meta.page - 1) }, true)}>
                Previous
              </Button>
              <span className="muted">
                Page {meta.page} of {meta.pages} · {meta.total} tasks
              </span>
              <Button disabled={meta.page >= meta.pages} onClick={() => update({ page: String(meta.page + 1) }, true)}>
                Next
              </Button>
            </nav>
          ) : meta && meta.total > 0 ? (
            <p className="small muted">{meta.total === 1 ? '1 task' : `${meta.total} tasks`}</p>
          ) : null}
        </>
      ) : null}

      <TaskDrawer
        id={openTask}
        projectId={projectId}
        canWrite={canWrite}
        taskLink={taskLink}
        onClose={() => update({ task: undefined }, true)}
        onChanged={list.reload}
        onFilterAutomation={(automation_id) => update({ automation_id, task: undefined })}
      />
    </div>
  );
}

function Filters({
  filter,
  onChange,
}: {
  filter: Filter;
  onChange: (changes: Record<string, string | undefined>) => void;
}) {
  // The ids are typed, then applied (Enter or "Apply"); the selects apply at once.
  const [mediaId, setMediaId] = useState(filter.media_id ?? '');
  const [automationId, setAutomationId] = useState(filter.automation_id ?? '');
  const [seen, setSeen] = useState(filter);
  if (seen.media_id !== filter.media_id || seen.automation_id !== filter.automation_id) {
    setSeen(filter);
    setMediaId(filter.media_id ?? '');
    setAutomationId(filter.automation_id ?? '');
  }
  const apply = (e: FormEvent) => {
    e.preventDefault();
    onChange({ media_id: mediaId.trim() || undefined, automation_id: automationId.trim() || undefined });
  };
  return (
    <form className="task-filters" role="search" aria-label="Filter tasks" onSubmit={apply}>
      <div className="field">
        <label htmlFor="task-status">Status</label>
        <select
          id="task-status"
          value={filter.status ?? ''}
          onChange={(e) => onChange({ status: e.target.value || undefined })}
        >
          <option value="">Any status</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {STATUS_LABELS[s]}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="task-kind">Kind</label>
        <select
          id="task-kind"
          value={filter.kind ?? ''}
          onChange={(e) => onChange({ kind: e.target.value || undefined })}
        >
          <option value="">Any kind</option>
          {KINDS.map((k) => (
            <option key={k} value={k}>
              {KIND_LABELS[k]}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="task-media">Media id</label>
        <input
          id="task-media"
          value={mediaId}
          onChange={(e) => setMediaId(e.target.value)}
          placeholder="med_…"
          autoComplete="off"
          spellCheck={false}
        />
      </div>
      <div className="field">
        <label htmlFor="task-automation">Automation id</label>
        <input
          id="task-automation"
          value={automationId}
          onChange={(e) => setAutomationId(e.target.value)}
          placeholder="auto_…"
          autoComplete="off"
          spellCheck={false}
        />
      </div>
      <div className="task-filter-buttons">
        <Button type="submit">Apply</Button>
      </div>
    </form>
  );
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="task-section" aria-label={title}>
      <h3>{title}</h3>
      {children}
    </section>
  );
}

function Json({ value, label }: { value: unknown; label: string }) {
  const text = JSON.stringify(value, null, 2);
  return (
    <div className="task-json">
      <pre aria-label={`${label} (JSON)`} tabIndex={0}>
        {text}
      </pre>
      <CopyButton value={text} className="task-json-copy" label={`Copy ${label.toLowerCase()}`} />
    </div>
  );
}

/** One task: input, options, output, timings, failure, steps, actions and "copy as curl". */
function TaskDrawer({
  id,
  projectId,
  canWrite,
  taskLink,
  onClose,
  onChanged,
  onFilterAutomation,
}: {
  id: string | null;
  projectId: string;
  canWrite: boolean;
  taskLink: (id: string) => string;
  onClose: () => void;
  onChanged: () => void;
  onFilterAutomation: (id: string) => void;
}) {
  return (
    <Dialog.Root open={id !== null} onOpenChange={(open) => (open ? undefined : onClose())}>
      <Dialog.Portal>
        <Dialog.Overlay className="dialog-overlay" />
        <Dialog.Content className="task-drawer" aria-describedby={undefined}>
          {id ? (
            <TaskDetail
              id={id}
              projectId={projectId}
              canWrite={canWrite}
              taskLink={taskLink}
              onChanged={onChanged}
              onFilterAutomation={onFilterAutomation}
            />
          ) : null}
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

function TaskDetail({
  id,
  projectId,
  canWrite,
  taskLink,
  onChanged,
  onFilterAutomation,
}: {
  id: string;
  projectId: string;
  canWrite: boolean;
  taskLink: (id: string) => string;
  onChanged: () => void;
  onFilterAutomation: (id: string) => void;
}) {
  const [final, setFinal] = useState(false);
  const loaded = useLiveLoad(
    async () => ok(await api.GET('/tasks/{id}', { params: { path: { id } } })).data,
    id,
    !final,
  );
  const task = loaded.data;
  const isFinal = task ? FINAL.has(task.status) : false;
  if (isFinal !== final) setFinal(isFinal);
  const outputUrl = str(task?.output, 'url');
  return (
    <>
      <div className="task-drawer-head">
        <Dialog.Title>{task ? `${task.kind} task` : 'Task'}</Dialog.Title>
        <Dialog.Close asChild>
          <button type="button" className="btn btn-small" aria-label="Close">
            ×
          </button>
        </Dialog.Close>
      </div>
      <div className="row">
        <code>{id}</code>
        <CopyButton value={id} label="Copy id" />
        <CopyAsCurl path={`/tasks/${id}`} />
      </div>
      <ErrorBanner error={loaded.error} onRetry={loaded.reload} />
      {!task ? (
        loaded.loading ? (
          <Skeleton lines={5} label="Loading the task" />
        ) : null
      ) : (
        <>
          <div className="row">
            <StatusBadge status={task.status} />
            <Progress task={task} />
          </div>
          {task.status === 'failed' ? (
            <div className="banner banner-error" role="alert">
              <div>
                <strong>{task.error ?? 'The task failed.'}</strong>
                <p>
                  Code <code>{task.error_code ?? 'failed'}</code> after {task.attempts}{' '}
                  {task.attempts === 1 ? 'attempt' : 'attempts'}.
                </p>
              </div>
            </div>
          ) : null}
          {canWrite ? (
            <TaskActions
              task={task}
              onChanged={() => {
                setFinal(false);
                loaded.reload();
                onChanged();
              }}
            />
          ) : null}

          <Section title="Timings">
            <dl className="task-kv">
              <dt>Created</dt>
              <dd>
                <Time iso={task.created} />
              </dd>
              <dt>Started</dt>
              <dd>
                <Time iso={task.started} />
                {formatDuration(task.created, task.started) ? (
                  <span className="muted"> (queued {formatDuration(task.created, task.started)})</span>
                ) : null}
              </dd>
              <dt>Finished</dt>
              <dd>
                <Time iso={task.finished} />
                {formatDuration(task.started, task.finished) ? (
                  <span className="muted"> (ran {formatDuration(task.started, task.finished)})</span>
                ) : null}
              </dd>
              <dt>Attempts</dt>
              <dd>{task.attempts}</dd>
              {task.retry_of ? (
                <>
                  <dt>Retry of</dt>
                  <dd>
                    <Link to={taskLink(task.retry_of)}>{task.retry_of}</Link>
                  </dd>
                </>
              ) : null}
              {task.parent_id ? (
                <>
                  <dt>Step of</dt>
                  <dd>
                    <Link to={taskLink(task.parent_id)}>{task.parent_id}</Link>
                  </dd>
                </>
              ) : null}
              {task.automation_id ? (
                <>
                  <dt>Automation</dt>
                  <dd>
                    <button
                      type="button"
                      className="task-linklike"
                      onClick={() => onFilterAutomation(task.automation_id ?? '')}
                    >
                      {task.automation_id}
                    </button>{' '}
                    <span className="muted small">(shows its tasks)</span>
                  </dd>
                </>
              ) : null}
            </dl>
          </Section>

          <Section title="Input">
            <Place value={task.input} projectId={projectId} />
            {task.input ? <Json value={task.input} label="Input" /> : null}
          </Section>

          <Section title="Options">
            {Object.keys(task.options).length ? (
              <Json value={task.options} label="Options" />
            ) : (
              <p className="muted">None</p>
            )}
          </Section>

          <Section title="Output">
            {task.output ? (
              <>
                <div className="row">
                  <Place value={task.output} projectId={projectId} />
                  {outputUrl ? (
                    <a href={outputUrl} target="_blank" rel="noreferrer">
                      Open the file
                    </a>
                  ) : null}
                </div>
                <Json value={task.output} label="Output" />
              </>
            ) : (
              <p className="muted">{isFinal ? 'No output.' : 'Not yet: the task has not completed.'}</p>
            )}
            {task.results ? <Json value={task.results} label="Results" /> : null}
          </Section>

          {task.workflow?.length ? (
            <Section title="Steps">
              <ol className="task-steps">
                {task.workflow.map((s) => (
                  <li key={s.id}>
                    <Link to={taskLink(s.id)}>{s.id}</Link> <span className="muted">{s.kind}</span>{' '}
                    <StatusBadge status={s.status} />
                  </li>
                ))}
              </ol>
            </Section>
          ) : null}

          {task.webhook_url ? (
            <Section title="Webhook">
              <code className="small">{task.webhook_url}</code>
            </Section>
          ) : null}
        </>
      )}
    </>
  );
}
