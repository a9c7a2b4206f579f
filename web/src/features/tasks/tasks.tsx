import { useState } from 'react';
import { useParams, useSearchParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import { pageOf } from '../../components/pager';
import { Button } from '../../components/button';
import { DataTable } from '../../components/data-table';
import { EmptyState } from '../../components/empty-state';
import { ErrorBanner } from '../../components/error-banner';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { membershipOf, permissionsFor, useSignedIn } from '../../lib/session';
import './tasks.css';
import { type RetryResult, isStatus, isKind, LIMIT } from './tasks-model';
import { type Filter, RetryAllButton, RetryAllResult } from './retry-all';
import { taskColumns } from './task-columns';
import { useLiveLoad } from './use-live-load';
import { Filters } from './task-filters';
import { TaskDrawer } from './task-drawer';

// Tasks (/app/p/:projectId/tasks): a live list of the project's tasks (GET /tasks polled every
// 2 s while the tab is visible), filtered by status, kind, media and automation (kept in the URL
// with the page and the open task), progress of running tasks, failures with their code, message
// and attempts; cancel, retry, and retry every failed task of the filter; a drawer with one task's
// input, options, output, timings and "copy as curl". Viewers get no action buttons.

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
  const columns = taskColumns({ rows, taskLink, projectId, canWrite, onChanged: list.reload });
  const filtered = Object.values(filter).some((v) => v !== undefined);

  const meta = list.data?.meta;
  return (
    <div className="page">
      <PageHeader
        title="Tasks"
        description="Every task of this project, newest first. The list updates by itself while this tab is open."
        actions={
          canWrite ? (
            <RetryAllButton
              filter={filter}
              onRetried={(result) => {
                setRetryResult(result);
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
