import { useId } from 'react';
import { useSearchParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import type { Loaded } from '../../lib/use-load';
import { Button } from '../../components/button';
import { DataTable } from '../../components/data-table';
import { EmptyState } from '../../components/empty-state';
import { ErrorBanner } from '../../components/error-banner';
import { pageHref, Pager } from '../../components/pager';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { AttemptCodes, DeliveryBadge, RedeliverButton, STATUSES, type DeliveryStatus } from './delivery-parts';
import type { Endpoint } from './webhooks-form';
import { PlainOptions } from '../../components/plain-options';

// The delivery log: a status filter, one row a delivery with its attempts' codes, and the pager.

const LIMIT = 20;

/** A page of the endpoint's deliveries (the page refreshes it while it is open). */
export async function loadDeliveries(id: string, page: number, status: DeliveryStatus | undefined) {
  return ok(
    await api.GET('/webhooks/{id}/deliveries', {
      params: { path: { id }, query: { page, limit: LIMIT, ...(status ? { status } : {}) } },
    }),
  );
}
type Deliveries = Awaited<ReturnType<typeof loadDeliveries>>;

export function DeliveriesLog({
  endpoint,
  deliveries,
  status,
  canWrite,
  setParam,
}: {
  endpoint: Endpoint;
  deliveries: Loaded<Deliveries>;
  status: DeliveryStatus | undefined;
  canWrite: boolean;
  setParam: (name: string, value: string | null, resetPage?: boolean) => void;
}) {
  const [params] = useSearchParams();
  const selectId = useId();
  return (
    <section className="stack" aria-labelledby="deliveries-heading">
      <div className="row row-between">
        <h2 id="deliveries-heading">Deliveries</h2>
        <div className="row">
          <label htmlFor={selectId}>Status</label>
          <select
            id={selectId}
            className="narrow-select"
            value={status ?? ''}
            onChange={(e) => setParam('status', e.target.value || null, true)}
          >
            <PlainOptions any="All" values={STATUSES} />
          </select>
        </div>
      </div>
      <ErrorBanner error={deliveries.error} onRetry={deliveries.reload} />
      {deliveries.loading ? (
        <Skeleton lines={4} label="Loading deliveries" />
      ) : deliveries.data ? (
        <>
          <DataTable
            caption="Deliveries"
            rows={deliveries.data.data}
            rowKey={(d) => d.id}
            empty={
              <EmptyState
                title={status ? `No ${status} deliveries` : 'No deliveries yet'}
                description="Send a test event, or wait for the events this endpoint subscribes to."
              />
            }
            columns={[
              { key: 'created', header: 'Created', cell: (d) => <Time iso={d.created} /> },
              { key: 'event', header: 'Event', cell: (d) => <code>{d.event_type}</code> },
              { key: 'status', header: 'Status', cell: (d) => <DeliveryBadge status={d.status} /> },
              { key: 'attempts', header: 'Attempts (response codes)', cell: (d) => <AttemptCodes delivery={d} /> },
              {
                key: 'latency',
                header: 'Last latency',
                className: 'num',
                cell: (d) => {
                  const last = d.attempts.at(-1);
                  return last ? `${last.duration_ms} ms` : '—';
                },
              },
              {
                key: 'next',
                header: 'Next attempt',
                cell: (d) => (d.next_attempt ? <Time iso={d.next_attempt} /> : <span className="muted">—</span>),
              },
              {
                key: 'actions',
                header: <span className="sr-only">Actions</span>,
                className: 'num',
                cell: (d) => (
                  <div className="row row-end">
                    <Button
                      className="btn-small"
                      aria-label={`Details of ${d.id}`}
                      onClick={() => setParam('delivery', d.id)}
                    >
                      Details
                    </Button>
                    {canWrite ? <RedeliverButton endpoint={endpoint} delivery={d} onDone={deliveries.reload} /> : null}
                  </div>
                ),
              },
            ]}
          />
          <Pager meta={deliveries.data.meta} hrefFor={(p) => pageHref(params, p)} />
        </>
      ) : null}
    </section>
  );
}
