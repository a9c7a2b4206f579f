import { useState } from 'react';
import { api, ok } from '../../lib/api/client';
import type { Data } from '../../lib/api/types';
import { useToast } from '../../components/toast';
import { Button } from '../../components/button';
import { type Endpoint } from './webhooks-form';

// A delivery's status, its attempts' response codes, and redelivery: the log's rows and the open
// delivery show them alike.

type Delivery = Data<'/webhooks/{id}/deliveries', 'get'>[number];

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export const STATUSES: DeliveryStatus[] = ['pending', 'delivered', 'failed'];

export const isStatus = (s: string | null): s is DeliveryStatus => STATUSES.some((x) => x === s);

export function DeliveryBadge({ status }: { status: string }) {
  const tone = status === 'delivered' ? 'badge-ok' : status === 'failed' ? 'badge-danger' : 'badge-warn';
  return <span className={`badge ${tone}`}>{status}</span>;
}

export function AttemptCodes({ delivery }: { delivery: Delivery }) {
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

export function RedeliverButton({
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
