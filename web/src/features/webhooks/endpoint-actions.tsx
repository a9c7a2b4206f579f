import { api, ok } from '../../lib/api/client';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { useToast } from '../../components/toast';
import type { Endpoint } from './webhooks-form';

// The endpoint's header buttons: test event, edit, rotate the secret (owners and admins), disable.

export function EndpointActions({
  endpoint,
  canManage,
  busy,
  act,
  onEdit,
  onRotated,
  onTested,
  onDisable,
}: {
  endpoint: Endpoint;
  canManage: boolean;
  busy: string | null;
  act: (name: string, fn: () => Promise<void>) => Promise<void>;
  onEdit: () => void;
  onRotated: (endpoint: Endpoint) => void;
  onTested: () => void;
  onDisable: () => void;
}) {
  const toast = useToast();
  const id = endpoint.id;
  return (
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
            onTested();
          })
        }
      >
        Send test event
      </Button>
      <Button onClick={onEdit}>Edit</Button>
      {/* A signing secret is for owners and admins (members may not read one). */}
      {canManage ? (
        <ConfirmDialog
          trigger={<Button>Rotate secret</Button>}
          title="Rotate this endpoint's secret?"
          description="A new secret signs from now on; the old one keeps signing beside it for 24 hours (two signatures), so your receiver can switch."
          confirmLabel="Rotate"
          tone="primary"
          onConfirm={async () => {
            onRotated(ok(await api.POST('/webhooks/{id}/rotate-secret', { params: { path: { id } } })).data);
          }}
        />
      ) : null}
      {endpoint.enabled ? (
        <Button busy={busy === 'disable'} onClick={onDisable}>
          Disable
        </Button>
      ) : null}
    </>
  );
}
