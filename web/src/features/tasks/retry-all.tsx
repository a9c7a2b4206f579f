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
