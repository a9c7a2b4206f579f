import { useId, useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import type { Data } from '../../lib/api/types';
import { useToast } from '../../components/toast';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { CopyAsCurl } from '../../components/copy-as-curl';
import { DataTable } from '../../components/data-table';
import { EmptyState } from '../../components/empty-state';
import { ErrorBanner } from '../../components/error-banner';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { membershipOf, permissionsFor, useSignedIn } from '../../lib/session';
import { pageHref, pageOf, Pager, withParam } from '../../components/pager';
import { EndpointStatus } from './webhooks';
import { EndpointDialog, NewSecretDialog, type Endpoint } from './webhooks-form';
import './webhooks.css';

// One webhook endpoint: its state (and why it was disabled, with re-enable), a test event
// (POST /webhooks/{id}/test), secret rotation, and the delivery log (GET /webhooks/{id}/deliveries,
// refreshed while open) with every attempt's code, latency and error, the payload sent, and
// redelivery (POST …/deliveries/{delivery_id}/retry). ?delivery=whd_… opens one delivery.

type Delivery = Data<'/webhooks/{id}/deliveries', 'get'>[number];
type DeliveryStatus = 'pending' | 'delivered' | 'failed';
const STATUSES: DeliveryStatus[] = ['pending', 'delivered', 'failed'];
const isStatus = (s: string | null): s is DeliveryStatus => STATUSES.some((x) => x === s);
const LIMIT = 20;

function DeliveryBadge({ status }: { status: string }) {
  const tone = status === 'delivered' ? 'badge-ok' : status === 'failed' ? 'badge-danger' : 'badge-warn';
  return <span className={`badge ${tone}`}>{status}</span>;
}

function AttemptCodes({ delivery }: { delivery: Delivery }) {
  if (delivery.attempts.length === 0) return <span className="muted">not sent yet</span>;
  return (
    <span className="badges" aria-label={`${delivery.attempts.length} attempts`}>
      {delivery.attempts.map((a) => (
        <span
          key={a.attempt}
          className={`badge ${a.status === 'succeeded' ? 'badge-ok' : 'badge-danger'}`}
          title={a.error ?? `${a.duration_ms} ms`}
        >
          {a.status_code ?? 'no answer'}
        </span>
      ))}
    </span>
  );
}

function RedeliverButton({
  endpoint,
  delivery,
  onDone,
}: {
  endpoint: Endpoint;
  delivery: Delivery;
  onDone: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const toast = useToast();
  // A pending delivery's next scheduled attempt is brought forward; others are sent again.
  const label = delivery.status === 'pending' ? 'Retry now' : 'Redeliver';
  return (
    <Button
      className="btn-small"
      busy={busy}
      disabled={!endpoint.enabled}
      title={endpoint.enabled ? undefined : 'Enable the endpoint first'}
      aria-label={`${label} ${delivery.id}`}
      onClick={async () => {
        setBusy(true);
        try {
          ok(
            await api.POST('/webhooks/{id}/deliveries/{delivery_id}/retry', {
              params: { path: { id: endpoint.id, delivery_id: delivery.id } },
            }),
          );
          toast({ title: `${delivery.event_type} scheduled to be sent now`, tone: 'success' });
          onDone();
        } catch (err) {
          toast({ title: 'Could not redeliver', description: err instanceof Error ? err.message : '', tone: 'error' });
        } finally {
          setBusy(false);
        }
      }}
    >
      {label}
    </Button>
  );
}

function payloadText(payload: string): string {
  try {
    return JSON.stringify(JSON.parse(payload), null, 2);
  } catch {
    return payload;
  }
}

function DeliveryPanel({
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

export default function WebhookDetailPage() {
  const { projectId = '', id = '' } = useParams();
  const session = useSignedIn();
  const { canWrite, canManage } = permissionsFor(membershipOf(session, projectId)?.role);
  const [params, setParams] = useSearchParams();
  const statusParam = params.get('status');
  const status = isStatus(statusParam) ? statusParam : undefined;
  const page = pageOf(params);
  const deliveryId = params.get('delivery');
  const [editing, setEditing] = useState(false);
  const [rotated, setRotated] = useState<Endpoint | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const toast = useToast();
  const selectId = useId();

  const ep = useLoad(async () => ok(await api.GET('/webhooks/{id}', { params: { path: { id } } })).data, id, 5000);
  const deliveries = useLoad(
    async () =>
      ok(
        await api.GET('/webhooks/{id}/deliveries', {
          params: { path: { id }, query: { page, limit: LIMIT, ...(status ? { status } : {}) } },
        }),
      ),
    JSON.stringify([id, status, page]),
    2000,
  );
  const endpoint = ep.data;

  const setParam = (name: string, value: string | null, resetPage = false) =>
    setParams((prev) => withParam(prev, name, value, resetPage ? ['page'] : []));

  const act = async (name: string, fn: () => Promise<void>) => {
    setBusy(name);
    setActionError(null);
    try {
      await fn();
    } catch (err) {
      setActionError(err);
    } finally {
      setBusy(null);
    }
  };

  if (!endpoint) {
    return (
      <div className="page">
        <PageHeader title="Webhook endpoint" />
        <ErrorBanner error={ep.error} onRetry={ep.reload} />
        {ep.loading ? <Skeleton lines={4} label="Loading the endpoint" /> : null}
      </div>
    );
  }

  const setEnabled = (enabled: boolean) =>
    act(enabled ? 'enable' : 'disable', async () => {
      ok(await api.PATCH('/webhooks/{id}', { params: { path: { id } }, body: { enabled } }));
      toast({ title: enabled ? 'Endpoint enabled' : 'Endpoint disabled', tone: 'success' });
      ep.reload();
      deliveries.reload();
    });

  return (
    <div className="page">
      <p className="small">
        <Link to={`/p/${projectId}/webhooks`}>← Webhooks</Link>
      </p>
      <PageHeader
        title={endpoint.url}
        description={
          <>
            <EndpointStatus endpoint={endpoint} /> {endpoint.description ?? ''}{' '}
            <span className="badges">
              {endpoint.events.map((t) => (
                <code key={t} className="badge">
                  {t === '*' ? 'all events' : t}
                </code>
              ))}
            </span>
          </>
        }
        actions={
          canWrite ? (
            <>
              <Button
                tone="primary"
                busy={busy === 'test'}
                disabled={!endpoint.enabled}
                title={endpoint.enabled ? undefined : 'Enable the endpoint first'}
                onClick={() =>
                  act('test', async () => {
                    const d = ok(await api.POST('/webhooks/{id}/test', { params: { path: { id } } })).data;
                    toast({ title: 'Test event queued', description: d.id, tone: 'success' });
                    deliveries.reload();
                  })
                }
              >
                Send test event
              </Button>
              <Button onClick={() => setEditing(true)}>Edit</Button>
              {/* A signing secret is for owners and admins (members may not read one). */}
              {canManage ? (
                <ConfirmDialog
                  trigger={<Button>Rotate secret</Button>}
                  title="Rotate this endpoint's secret?"
                  description="A new secret signs from now on; the old one keeps signing beside it for 24 hours (two signatures), so your receiver can switch."
                  confirmLabel="Rotate"
                  tone="primary"
                  onConfirm={async () => {
                    setRotated(ok(await api.POST('/webhooks/{id}/rotate-secret', { params: { path: { id } } })).data);
                    ep.reload();
                  }}
                />
              ) : null}
              {endpoint.enabled ? (
                <Button busy={busy === 'disable'} onClick={() => setEnabled(false)}>
                  Disable
                </Button>
              ) : null}
            </>
          ) : undefined
        }
      />

      {!endpoint.enabled ? (
        <div className="banner banner-warn banner-action" role="status" data-disabled>
          <div>
            <strong>This endpoint is disabled: nothing is sent to it.</strong>
            <p>
              {endpoint.disabled_reason ? <>Why: {endpoint.disabled_reason}. </> : null}
              {endpoint.disabled_at ? (
                <>
                  Since <Time iso={endpoint.disabled_at} />.
                </>
              ) : null}{' '}
              Re-enabling resets its failure count; then redeliver what it missed.
            </p>
          </div>
          {canWrite ? (
            <Button tone="primary" busy={busy === 'enable'} onClick={() => setEnabled(true)}>
              Re-enable
            </Button>
          ) : null}
        </div>
      ) : endpoint.failed_deliveries > 0 ? (
        <div className="banner banner-warn" role="status">
          <p>
            {endpoint.failed_deliveries} deliveries in a row failed after every retry; after three the endpoint is
            disabled.
          </p>
        </div>
      ) : null}
      <ErrorBanner error={actionError} />

      {endpoint.previous_secret_expires ? (
        <p className="small muted">
          Secret rotated: the previous secret signs too until <Time iso={endpoint.previous_secret_expires} />.
        </p>
      ) : null}

      {deliveryId ? (
        <DeliveryPanel
          key={deliveryId}
          endpoint={endpoint}
          deliveryId={deliveryId}
          canWrite={canWrite}
          onClose={() => setParam('delivery', null)}
          onChanged={deliveries.reload}
        />
      ) : null}

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
              <option value="">All</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
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
                      {canWrite ? (
                        <RedeliverButton endpoint={endpoint} delivery={d} onDone={deliveries.reload} />
                      ) : null}
                    </div>
                  ),
                },
              ]}
            />
            <Pager
              page={deliveries.data.meta.page}
              pages={deliveries.data.meta.pages}
              total={deliveries.data.meta.total}
              hrefFor={(p) => pageHref(params, p)}
            />
          </>
        ) : null}
      </section>

      {editing ? (
        <EndpointDialog
          open
          endpoint={endpoint}
          onClose={() => setEditing(false)}
          onSaved={() => {
            setEditing(false);
            toast({ title: 'Endpoint saved', tone: 'success' });
            ep.reload();
          }}
        />
      ) : null}
      <NewSecretDialog
        secret={rotated?.secret ?? null}
        title="Secret rotated"
        previousExpires={rotated?.previous_secret_expires}
        onClose={() => setRotated(null)}
      />
    </div>
  );
}
