import { Link, useParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import { Button } from '../../components/button';
import { CopyAsCurl } from '../../components/copy-as-curl';
import { DataTable } from '../../components/data-table';
import { ErrorBanner } from '../../components/error-banner';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { type Endpoint } from './webhooks-form';
import { DeliveryBadge, RedeliverButton } from './delivery-parts';

// One delivery (?delivery=whd_…): its facts, every attempt, the payload sent, redeliver and curl.

function payloadText(payload: string): string {
  try {
    return JSON.stringify(JSON.parse(payload), null, 2);
  } catch {
    return payload;
  }
}

export function DeliveryPanel({
  endpoint,
  deliveryId,
  canWrite,
  onClose,
  onChanged,
}: {
  endpoint: Endpoint;
  deliveryId: string;
  canWrite: boolean;
  onClose: () => void;
  onChanged: () => void;
}) {
  const { projectId = '' } = useParams();
  const one = useLoad(
    async () =>
      ok(
        await api.GET('/webhooks/{id}/deliveries/{delivery_id}', {
          params: { path: { id: endpoint.id, delivery_id: deliveryId } },
        }),
      ).data,
    `${endpoint.id}:${deliveryId}`,
    2000,
  );
  const d = one.data;
  return (
    <section className="card stack" aria-labelledby="delivery-heading" data-delivery={deliveryId}>
      <div className="row row-between">
        <h2 id="delivery-heading">
          Delivery <code>{deliveryId}</code>
        </h2>
        <Button className="btn-small" onClick={onClose}>
          Close
        </Button>
      </div>
      <ErrorBanner error={one.error} onRetry={one.reload} />
      {!d ? (
        one.loading ? (
          <Skeleton lines={3} label="Loading the delivery" />
        ) : null
      ) : (
        <>
          <dl className="facts">
            <dt>Status</dt>
            <dd>
              <DeliveryBadge status={d.status} />
              {d.next_attempt ? (
                <span className="small muted">
                  {' '}
                  next attempt <Time iso={d.next_attempt} />
                </span>
              ) : null}
            </dd>
            <dt>Event</dt>
            <dd>
              <code>{d.event_type}</code>{' '}
              {d.event_id && d.event_type !== 'webhook.test' ? (
                <Link to={`/p/${projectId}/events?event=${d.event_id}`}>{d.event_id}</Link>
              ) : (
                <code className="small">{d.event_id}</code>
              )}
            </dd>
            <dt>Sent to</dt>
            <dd>
              <code>{d.url}</code>
            </dd>
            <dt>Created</dt>
            <dd>
              <Time iso={d.created} />
            </dd>
          </dl>
          <DataTable
            caption={`Attempts of ${d.id}`}
            rows={d.attempts}
            rowKey={(a) => String(a.attempt)}
            empty={<p className="muted">No attempt yet: it is being sent.</p>}
            columns={[
              { key: 'n', header: 'Attempt', cell: (a) => a.attempt, className: 'num' },
              {
                key: 'result',
                header: 'Result',
                cell: (a) => (
                  <span className={`badge ${a.status === 'succeeded' ? 'badge-ok' : 'badge-danger'}`}>{a.status}</span>
                ),
              },
              { key: 'code', header: 'Response code', cell: (a) => a.status_code ?? '—', className: 'num' },
              { key: 'ms', header: 'Latency', cell: (a) => `${a.duration_ms} ms`, className: 'num' },
              { key: 'error', header: 'Error', cell: (a) => a.error ?? '' },
              { key: 'at', header: 'At', cell: (a) => <Time iso={a.created} /> },
            ]}
          />
          {d.payload !== undefined ? (
            <details open>
              <summary>Payload sent</summary>
              <pre className="json" aria-label="Payload sent">
                {payloadText(d.payload)}
              </pre>
            </details>
          ) : null}
          <div className="row">
            {canWrite ? (
              <RedeliverButton
                endpoint={endpoint}
                delivery={d}
                onDone={() => {
                  one.reload();
                  onChanged();
                }}
              />
            ) : null}
            <CopyAsCurl path={`/webhooks/${endpoint.id}/deliveries/${d.id}`} />
          </div>
        </>
      )}
    </section>
  );
}
