import { Link } from 'react-router';
import type { Task } from '../../lib/api/types';
import type { Column } from '../../components/data-table';
import { Time } from '../../components/time';
import { formatDuration } from './tasks-model';
import { Failure, Place, Progress, StatusBadge, TaskActions } from './task-parts';

// The task list's columns: id and kind, status with progress and failure, attempts, input, times,
// and (for those who may write) cancel and retry.

export function taskColumns({
  rows,
  taskLink,
  projectId,
  canWrite,
  onChanged,
}: {
  rows: Task[];
  taskLink: (id: string) => string;
  projectId: string;
  canWrite: boolean;
  onChanged: () => void;
}): Column<Task>[] {
  // A failed task retried since: its retry (when it is on this page) is linked from its row.
  const retriedAs = new Map<string, string>();
  for (const t of rows) if (t.retry_of) retriedAs.set(t.retry_of, t.id);

  return [
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
            cell: (t: Task) => <TaskActions task={t} onChanged={onChanged} />,
          },
        ]
      : []),
  ];
}
