import { api, ok } from '../../lib/api/client';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { type Status, type Kind, type RetryResult } from './tasks-model';

// "Retry all failed" acts on the current filter; its result says which tasks could not be retried.

export interface Filter {
  status: Status | undefined;
  kind: Kind | undefined;
  media_id: string | undefined;
  automation_id: string | undefined;
}

export function describeFilter(f: Filter): string {
  const parts = [
    f.kind ? `of kind ${f.kind}` : null,
    f.media_id ? `of media ${f.media_id}` : null,
    f.automation_id ? `started by automation ${f.automation_id}` : null,
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'of this project';
}

export function RetryAllResult({ result, onClose }: { result: RetryResult; onClose: () => void }) {
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

/** "Retry all failed" of the current filter, after asking. */
export function RetryAllButton({ filter, onRetried }: { filter: Filter; onRetried: (result: RetryResult) => void }) {
  return (
    <ConfirmDialog
      trigger={<Button>Retry all failed</Button>}
      title="Retry all failed tasks"
      description={
        <p>
          Every failed task {describeFilter(filter)} runs again as a new task (at most 1,000, oldest first). A task that
          was retried before is not retried again.
        </p>
      }
      confirmLabel="Retry failed tasks"
      tone="primary"
      onConfirm={async () => {
        const { status: _all, ...body } = filter;
        onRetried(ok(await api.POST('/tasks/retry', { body })).data);
      }}
    />
  );
}
