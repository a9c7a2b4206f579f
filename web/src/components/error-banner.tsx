import { asApiError, type ApiError } from '../lib/api/client';

/** An API error as the person should see it: what happened, its code, and what to do. */
export function ErrorBanner({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (!error) return null;
  const e: ApiError = asApiError(error);
  return (
    <div className="banner banner-error" role="alert">
      <div>
        <strong>{e.message}</strong>
        <p>
          {e.hint}{' '}
          <span className="muted">
            ({e.code}
            {e.requestId ? `, request ${e.requestId}` : ''})
          </span>
        </p>
        {e.details.length > 0 ? (
          <ul>
            {e.details.map((d) => (
              <li key={`${d.field}:${d.message}`}>
                <code>{d.field}</code>: {d.message}
              </li>
            ))}
          </ul>
        ) : null}
      </div>
      {onRetry ? (
        <button type="button" className="btn" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}
