import { useState } from 'react';
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
import { Secret } from '../../components/secret';
import { Skeleton } from '../../components/skeleton';
import { useLoad } from '../../lib/use-load';
import { membershipOf, permissionsFor, useSignedIn } from '../../lib/session';
import { EndpointDialog, NewSecretDialog, type Endpoint } from './webhooks-form';
import { VerifySnippets } from './webhooks-verify';
import './webhooks.css';

// Webhook endpoints (GET /webhooks): list, add, edit, delete (members and up; viewers read), each
// endpoint's page for its deliveries; the project's task-webhook secret (GET /project/webhook-secret,
// revealed on demand and rotated by owners and admins only: it signs what receivers trust); how to
// verify signatures. ?new=1 opens the form.

type ProjectSecret = Data<'/project/webhook-secret', 'get'>;

export function EndpointStatus({ endpoint }: { endpoint: Endpoint }) {
  if (endpoint.enabled) return <span className="badge badge-ok">Enabled</span>;
  return (
    <span className="badge badge-danger" title={endpoint.disabled_reason}>
      Disabled
    </span>
  );
}

function ProjectSecretCard() {
  const [secret, setSecret] = useState<ProjectSecret | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const toast = useToast();
  const reveal = async () => {
    setBusy(true);
    setError(null);
    try {
      setSecret(ok(await api.GET('/project/webhook-secret')).data);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card stack" aria-labelledby="project-secret-heading">
      <h2 id="project-secret-heading">Task webhook secret</h2>
      <p className="muted">
        Tasks created with a <code>webhook_url</code> are signed with this project-wide secret; each endpoint above has
        its own secret, shown once when it is added or rotated.
      </p>
      {secret ? (
        <>
          <Secret value={secret.secret} label="Task webhook secret" />
          {secret.previous_secret_expires ? (
            <p className="small muted">
              The previous secret signs too until {new Date(secret.previous_secret_expires).toLocaleString()}.
            </p>
          ) : null}
        </>
      ) : null}
      <ErrorBanner error={error} />
      <div className="row">
        {secret ? (
          <Button onClick={() => setSecret(null)}>Hide</Button>
        ) : (
          <Button busy={busy} onClick={reveal}>
            Reveal secret
          </Button>
        )}
        <ConfirmDialog
          trigger={<Button>Rotate secret</Button>}
          title="Rotate the task webhook secret?"
          description="A new secret signs from now on; the old one keeps signing beside it for 24 hours so receivers can switch."
          confirmLabel="Rotate"
          tone="primary"
          onConfirm={async () => {
            setSecret(ok(await api.POST('/project/webhook-secret/rotate')).data);
            toast({ title: 'Task webhook secret rotated', tone: 'success' });
          }}
        />
      </div>
    </section>
  );
}

export default function WebhooksPage() {
  const { projectId = '' } = useParams();
  const session = useSignedIn();
  const { canWrite, canManage } = permissionsFor(membershipOf(session, projectId)?.role);
  const [params, setParams] = useSearchParams();
  const [editing, setEditing] = useState<Endpoint | null>(null);
  const [created, setCreated] = useState<Endpoint | null>(null);
  const toast = useToast();
  const creating = params.get('new') === '1' && canWrite;
  const setCreating = (on: boolean) =>
    setParams((prev) => {
      const next = new URLSearchParams(prev);
      if (on) next.set('new', '1');
      else next.delete('new');
      return next;
    });

  const list = useLoad(
    async () => ok(await api.GET('/webhooks', { params: { query: { page: 1, limit: 100 } } })),
    projectId,
  );
  const endpoints = list.data?.data ?? [];

  return (
    <div className="page">
      <PageHeader
        title="Webhooks"
        description="Endpoints that receive this project's events, signed per Standard Webhooks."
        actions={
          <>
            <CopyAsCurl path="/webhooks" />
            {canWrite ? (
              <Button tone="primary" onClick={() => setCreating(true)}>
                Add endpoint
              </Button>
            ) : null}
          </>
        }
      />
      <ErrorBanner error={list.error} onRetry={list.reload} />
      {list.loading ? (
        <Skeleton lines={4} label="Loading webhook endpoints" />
      ) : (
        <DataTable
          caption="Webhook endpoints"
          rows={endpoints}
          rowKey={(e) => e.id}
          empty={
            <EmptyState
              title="No webhook endpoints"
              description="Add one to have mediad POST events (media created, task completed …) to your server."
              action={
                canWrite ? (
                  <Button tone="primary" onClick={() => setCreating(true)}>
                    Add endpoint
                  </Button>
                ) : undefined
              }
            />
          }
          columns={[
            {
              key: 'url',
              header: 'URL',
              cell: (e) => (
                <div className="stack-tight">
                  <Link to={`/p/${projectId}/webhooks/${e.id}`} className="url-cell">
                    {e.url}
                  </Link>
                  {e.description ? <span className="small muted">{e.description}</span> : null}
                </div>
              ),
            },
            {
              key: 'events',
              header: 'Events',
              cell: (e) => (
                <span className="badges">
                  {e.events.map((t) => (
                    <code key={t} className="badge">
                      {t === '*' ? 'all events' : t}
                    </code>
                  ))}
                </span>
              ),
            },
            {
              key: 'status',
              header: 'Status',
              cell: (e) => (
                <div className="stack-tight">
                  <EndpointStatus endpoint={e} />
                  {!e.enabled && e.disabled_reason ? <span className="small muted">{e.disabled_reason}</span> : null}
                  {e.enabled && e.failed_deliveries > 0 ? (
                    <span className="small muted">{e.failed_deliveries} failed in a row</span>
                  ) : null}
                </div>
              ),
            },
            {
              key: 'actions',
              header: <span className="sr-only">Actions</span>,
              className: 'num',
              cell: (e) => (
                <div className="row row-end">
                  <Link
                    className="btn btn-small"
                    to={`/p/${projectId}/webhooks/${e.id}`}
                    aria-label={`Deliveries of ${e.url}`}
                  >
                    Deliveries
                  </Link>
                  {canWrite ? (
                    <>
                      <Button className="btn-small" onClick={() => setEditing(e)} aria-label={`Edit ${e.url}`}>
                        Edit
                      </Button>
                      <ConfirmDialog
                        trigger={
                          <Button className="btn-small" tone="danger" aria-label={`Delete ${e.url}`}>
                            Delete
                          </Button>
                        }
                        title="Delete this endpoint?"
                        description={
                          <>
                            <code>{e.url}</code> stops receiving events; its pending deliveries are not sent.
                          </>
                        }
                        confirmLabel="Delete endpoint"
                        onConfirm={async () => {
                          ok(await api.DELETE('/webhooks/{id}', { params: { path: { id: e.id } } }));
                          toast({ title: 'Endpoint deleted', tone: 'success' });
                          list.reload();
                        }}
                      />
                    </>
                  ) : null}
                </div>
              ),
            },
          ]}
        />
      )}

      <VerifySnippets />
      {canManage ? <ProjectSecretCard /> : null}

      {creating ? (
        <EndpointDialog
          open
          onClose={() => setCreating(false)}
          onSaved={(e) => {
            setCreating(false);
            setCreated(e);
            list.reload();
          }}
        />
      ) : null}
      {editing ? (
        <EndpointDialog
          open
          endpoint={editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            toast({ title: 'Endpoint saved', tone: 'success' });
            list.reload();
          }}
        />
      ) : null}
      <NewSecretDialog secret={created?.secret ?? null} title="Endpoint added" onClose={() => setCreated(null)} />
    </div>
  );
}
