import { useState } from 'react';
import { Link } from 'react-router';
import { api, ok } from '../../lib/api/client';
import type { Task } from '../../lib/api/types';
import { useToast } from '../../components/toast';
import { Button } from '../../components/button';
import { isStatus, STATUS_LABELS, str, CANCELLABLE, RETRYABLE } from './tasks-model';

// Pieces of one task that the list's rows and the drawer both show.

export function StatusBadge({ status }: { status: string }) {
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

export function Progress({ task }: { task: Task }) {
  if (task.status !== 'processing') return null;
  return (
    <div className="task-progress">
      <progress value={task.progress} max={100} aria-label={`Progress of ${task.id}`} />
      <span className="small muted">{task.progress}%</span>
    </div>
  );
}

export function Failure({ task }: { task: Task }) {
  if (task.status !== 'failed') return null;
  return (
    <div className="task-error">
      <code>{task.error_code ?? 'failed'}</code> <span>{task.error ?? 'The task failed.'}</span>
    </div>
  );
}

/** Where a task's input or output is: its media (a link to it), its file, or a URL. */
export function Place({ value, projectId }: { value: unknown; projectId: string }) {
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
export function TaskActions({ task, onChanged }: { task: Task; onChanged: () => void }) {
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
