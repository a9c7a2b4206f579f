import { useState } from 'react';
import { useParams, useSearchParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import type { ApiKey } from '../../lib/api/types';
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
import { CreateKeyDialog } from './create-key-dialog';

// The project's API keys: list (name, hint, scopes, who made it, last used, expiry, state),
// create (name, scopes per resource family, optional expiry; the key is shown once), pause and
// resume, revoke. Owners and admins only: the API refuses everyone else (insufficient_role).

function keyState(k: ApiKey): { label: string; tone: string } {
  if (k.revoked) return { label: 'Revoked', tone: 'badge-danger' };
  if (k.expires && Date.parse(k.expires) <= Date.now()) return { label: 'Expired', tone: 'badge-danger' };
  if (k.paused) return { label: 'Paused', tone: 'badge-warn' };
  return { label: 'Active', tone: 'badge-ok' };
}

export default function KeysPage() {
  const { projectId } = useParams();
  const session = useSignedIn();
  const { canManage } = permissionsFor(membershipOf(session, projectId)?.role);
  const toast = useToast();
  // ?new=1 (the command palette's "New API key") opens the create dialog.
  const [params] = useSearchParams();
  const [creating, setCreating] = useState(params.get('new') === '1');
  const keys = useLoad(
    async () => ok(await api.GET('/keys', { params: { query: { page: 1, limit: 100 } } })).data,
    `keys:${projectId}`,
  );

  const setPaused = async (k: ApiKey, paused: boolean) => {
    try {
      ok(await api.PATCH('/keys/{id}', { params: { path: { id: k.id } }, body: { paused } }));
      toast({ title: `${k.name ?? k.hint} ${paused ? 'paused' : 'resumed'}`, tone: 'success' });
      keys.reload();
    } catch (err) {
      toast({
        title: 'The key could not be changed',
        description: err instanceof Error ? err.message : '',
        tone: 'error',
      });
    }
  };

  return (
    <div className="page">
      <PageHeader
        title="API keys"
        description="Keys let programs use this project's API. Each has scopes, an optional expiry, and can be paused."
        actions={
          <>
            <CopyAsCurl path="/keys" />
            {canManage ? (
              <Button tone="primary" onClick={() => setCreating(true)}>
                Create key
              </Button>
            ) : null}
          </>
        }
      />
      {!canManage ? (
        <div className="banner banner-warn" role="note">
          Only owners and admins of the organisation manage API keys.
        </div>
      ) : null}
      <ErrorBanner error={keys.error} onRetry={keys.reload} />
      {keys.loading ? (
        <Skeleton lines={5} />
      ) : (
        <DataTable<ApiKey>
          caption="API keys"
          rows={keys.data ?? []}
          rowKey={(k) => k.id}
          empty={
            keys.error ? null : (
              <EmptyState
                title="No API keys yet"
                description="Create one to call the API from your code."
                action={
                  canManage ? (
                    <Button tone="primary" onClick={() => setCreating(true)}>
                      Create key
                    </Button>
                  ) : null
                }
              />
            )
          }
          columns={[
            {
              key: 'name',
              header: 'Name',
              cell: (k) => (
                <>
                  <strong>{k.name ?? 'Unnamed key'}</strong>
                  <br />
                  <code className="muted">{k.hint}</code>
                </>
              ),
            },
            {
              key: 'scopes',
              header: 'Scopes',
              cell: (k) => (
                <span className="row">
                  {k.scopes.map((s) => (
                    <span key={s} className="badge">
                      {s}
                    </span>
                  ))}
                </span>
              ),
            },
            {
              key: 'state',
              header: 'State',
              cell: (k) => {
                const st = keyState(k);
                return <span className={`badge ${st.tone}`}>{st.label}</span>;
              },
            },
            { key: 'created', header: 'Created', cell: (k) => <Time iso={k.created} /> },
            {
              key: 'by',
              header: 'Created by',
              cell: (k) =>
                k.created_by ? (
                  k.created_by === session.user.id ? (
                    'You'
                  ) : (
                    <code>{k.created_by}</code>
                  )
                ) : (
                  <span className="muted">CLI or API</span>
                ),
            },
            {
              key: 'used',
              header: 'Last used',
              cell: (k) => (k.last_used ? <Time iso={k.last_used} /> : <span className="muted">Never</span>),
            },
            {
              key: 'expires',
              header: 'Expires',
              cell: (k) => (k.expires ? <Time iso={k.expires} /> : <span className="muted">Never</span>),
            },
            {
              key: 'actions',
              header: <span className="sr-only">Actions</span>,
              cell: (k) =>
                canManage && !k.revoked ? (
                  <span className="row">
                    <Button
                      className="btn-small"
                      onClick={() => void setPaused(k, !k.paused)}
                      aria-label={`${k.paused ? 'Resume' : 'Pause'} ${k.name ?? k.hint}`}
                    >
                      {k.paused ? 'Resume' : 'Pause'}
                    </Button>
                    <ConfirmDialog
                      trigger={
                        <Button className="btn-small" tone="danger" aria-label={`Revoke ${k.name ?? k.hint}`}>
                          Revoke
                        </Button>
                      }
                      title={`Revoke ${k.name ?? k.hint}?`}
                      description="Programs using this key stop working at once. This cannot be undone."
                      confirmLabel="Revoke key"
                      typed="revoke"
                      onConfirm={async () => {
                        ok(await api.DELETE('/keys/{id}', { params: { path: { id: k.id } } }));
                        toast({ title: `${k.name ?? k.hint} revoked`, tone: 'success' });
                        keys.reload();
                      }}
                    />
                  </span>
                ) : null,
            },
          ]}
        />
      )}
      <CreateKeyDialog open={creating} onClose={() => setCreating(false)} onCreated={keys.reload} />
    </div>
  );
}
