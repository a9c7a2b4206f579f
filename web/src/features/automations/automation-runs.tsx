import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import { Button } from '../../components/button';
import { EmptyState } from '../../components/empty-state';
import { ErrorBanner } from '../../components/error-banner';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { TableScroll } from '../../components/table-scroll';

// Run history (GET /automations/{id}/runs, newest first, refreshed every 3 s): each workflow task the
// automation started, the event that started it, and its steps' tasks, each linking to the tasks page
// with that task open.

const PAGE = 10;

function StatusBadge({ status }: { status: string }) {
  const tone =
    status === 'completed' ? 'badge-ok' : status === 'failed' || status === 'cancelled' ? 'badge-danger' : 'badge-warn';
  return <span className={`badge ${tone}`}>{status}</span>;
}

const seconds = (ms: number | undefined) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`);

export function RunHistory({ automationId }: { automationId: string }) {
  const { projectId = '' } = useParams();
  const [page, setPage] = useState(1);
  const runs = useLoad(
    async () =>
      ok(
        await api.GET('/automations/{id}/runs', {
          params: { path: { id: automationId }, query: { page, limit: PAGE } },
        }),
      ),
    `${automationId}:${page}`,
    3000,
  );
  const tasks = `/p/${projectId}/tasks`;
  const list = runs.data?.data ?? [];
  const total = runs.data?.meta.total ?? 0;
  return (
    <section className="card stack" id="runs" aria-labelledby="runs-heading">
      <h2 id="runs-heading">Run history</h2>
      <p className="muted small">
        The workflows this automation started.{' '}
        <Link to={`${tasks}?automation_id=${automationId}`}>All its tasks on the tasks page</Link>
      </p>
      <ErrorBanner error={runs.error} onRetry={runs.reload} />
      {runs.loading ? (
        <Skeleton lines={3} label="Loading runs" />
      ) : list.length === 0 ? (
        <EmptyState
          title="No runs yet"
          description="When the automation is enabled and its trigger occurs, its runs show here."
        />
      ) : (
        <ol className="runs">
          {list.map((run) => (
            <li key={run.id} className="run" data-run={run.id} data-status={run.status}>
              <div className="row">
                <Link to={`${tasks}?task=${run.id}`}>
                  <code>{run.id}</code>
                </Link>
                <StatusBadge status={run.status} />
                <Time iso={run.created} />
                <span className="small muted">{seconds(run.duration_ms)}</span>
                {run.event_id ? (
                  <Link className="small" to={`/p/${projectId}/events?event=${run.event_id}`}>
                    event {run.event_id}
                  </Link>
                ) : null}
              </div>
              {run.error ? <p className="field-error">{run.error}</p> : null}
              <TableScroll>
                <table className="data-table">
                  <caption className="sr-only">Steps of run {run.id}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Step task</th>
                      <th scope="col">Kind</th>
                      <th scope="col">Status</th>
                      <th scope="col">Duration</th>
                      <th scope="col">Output</th>
                    </tr>
                  </thead>
                  <tbody>
                    {run.steps.map((s) => (
                      <tr key={s.id} data-step-task={s.id} data-status={s.status}>
                        <td>
                          <Link to={`${tasks}?task=${s.id}`}>
                            <code>{s.id}</code>
                          </Link>
                        </td>
                        <td>{s.kind}</td>
                        <td>
                          <StatusBadge status={s.status} />
                          {s.error ? (
                            <div className="small field-error">
                              {s.error_code ? <code>{s.error_code}</code> : null} {s.error}
                            </div>
                          ) : null}
                        </td>
                        <td>{seconds(s.duration_ms)}</td>
                        <td>{s.output_file_id ? <code>{s.output_file_id}</code> : '—'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
            </li>
          ))}
        </ol>
      )}
      {total > PAGE ? (
        <div className="row">
          <Button disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Newer
          </Button>
          <span className="small muted">
            Page {page} of {Math.ceil(total / PAGE)}
          </span>
          <Button disabled={page * PAGE >= total} onClick={() => setPage(page + 1)}>
            Older
          </Button>
        </div>
      ) : null}
    </section>
  );
}
