import { useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import { useToast } from '../../components/toast';
import { ErrorBanner } from '../../components/error-banner';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { membershipOf, permissionsFor, useSignedIn } from '../../lib/session';
import { pageOf, withParam } from '../../components/pager';
import { EndpointStatus } from './webhooks';
import { EndpointDialog, NewSecretDialog, type Endpoint } from './webhooks-form';
import { isStatus } from './delivery-parts';
import { DeliveryPanel } from './delivery-panel';
import { DeliveriesLog, loadDeliveries } from './deliveries-log';
import { EndpointActions } from './endpoint-actions';
import { EndpointBanner } from './endpoint-banner';
import './webhooks.css';

// One webhook endpoint: its state (and why it was disabled, with re-enable), a test event
// (POST /webhooks/{id}/test), secret rotation, and the delivery log (GET /webhooks/{id}/deliveries,
// refreshed while open) with every attempt's code, latency and error, the payload sent, and
// redelivery (POST …/deliveries/{delivery_id}/retry). ?delivery=whd_… opens one delivery.

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

  const ep = useLoad(async () => ok(await api.GET('/webhooks/{id}', { params: { path: { id } } })).data, id, 5000);
  const deliveries = useLoad(() => loadDeliveries(id, page, status), JSON.stringify([id, status, page]), 2000);
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
            <EndpointActions
              endpoint={endpoint}
              canManage={canManage}
              busy={busy}
              act={act}
              onEdit={() => setEditing(true)}
              onRotated={(e) => {
                setRotated(e);
                ep.reload();
              }}
              onTested={deliveries.reload}
              onDisable={() => setEnabled(false)}
            />
          ) : undefined
        }
      />

      <EndpointBanner
        endpoint={endpoint}
        canWrite={canWrite}
        busy={busy === 'enable'}
        onEnable={() => setEnabled(true)}
      />
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

      <DeliveriesLog
        endpoint={endpoint}
        deliveries={deliveries}
        status={status}
        canWrite={canWrite}
        setParam={setParam}
      />

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
