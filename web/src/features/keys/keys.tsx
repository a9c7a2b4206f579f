import { useState } from 'react';
import { useParams, useSearchParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import type { ApiKey, Body } from '../../lib/api/types';
import { useToast } from '../../components/toast';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { CopyAsCurl } from '../../components/copy-as-curl';
import { DataTable } from '../../components/data-table';
import { EmptyState } from '../../components/empty-state';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { FormDialog } from '../../components/form-dialog';
import { PageHeader } from '../../components/page-header';
import { Secret } from '../../components/secret';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { membershipOf, permissionsFor, useSignedIn } from '../../lib/session';

// The project's API keys: list (name, hint, scopes, who made it, last used, expiry, state),
// create (name, scopes per resource family, optional expiry; the key is shown once), pause and
// resume, revoke. Owners and admins only: the API refuses everyone else (insufficient_role).

type Scope = NonNullable<Body<'/keys', 'post'>['scopes']>[number];
type Access = 'none' | 'read' | 'write';
type Family = 'files' | 'tasks' | 'automations' | 'events' | 'webhooks' | 'project' | 'secrets';
const FAMILIES: { id: Family; label: string }[] = [
  { id: 'files', label: 'Files and media' },
  { id: 'tasks', label: 'Tasks' },
  { id: 'automations', label: 'Automations' },
  { id: 'events', label: 'Events' },
  { id: 'webhooks', label: 'Webhooks' },
  { id: 'project', label: 'Project settings' },
  { id: 'secrets', label: 'Signing secrets' },
];
const ACCESS: Access[] = ['none', 'read', 'write'];

const SCOPE_LIST: Scope[] = [
  'full',
  'files:read',
  'files:write',
  'tasks:read',
  'tasks:write',
  'automations:read',
  'automations:write',
  'events:read',
  'events:write',
  'webhooks:read',
  'webhooks:write',
  'project:read',
  'project:write',
  'secrets:read',
  'secrets:write',
];

function toScope(s: string): Scope | undefined {
  return SCOPE_LIST.find((x) => x === s);
}

const EXPIRY = [
  { value: 'never', label: 'Never' },
  { value: '30', label: 'In 30 days' },
  { value: '90', label: 'In 90 days' },
  { value: '365', label: 'In a year' },
];

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

function CreateKeyDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [full, setFull] = useState(true);
  const [access, setAccess] = useState<Record<Family, Access>>({
    files: 'read',
    tasks: 'read',
    automations: 'none',
    events: 'none',
    webhooks: 'none',
    project: 'none',
    secrets: 'none',
  });
  const [expiry, setExpiry] = useState('never');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [made, setMade] = useState<ApiKey | null>(null);

  const scopes: Scope[] = full
    ? ['full']
    : FAMILIES.flatMap((f) => {
        const a = access[f.id];
        const s = a === 'none' ? undefined : toScope(`${f.id}:${a}`);
        return s ? [s] : [];
      });

  const reset = () => {
    setName('');
    setFull(true);
    setExpiry('never');
    setError(null);
    setMade(null);
  };

  return (
    <FormDialog
      open={open}
      onOpenChange={(o) => {
        if (!o) {
          reset();
          onClose();
        }
      }}
      title={made ? 'Your new API key' : 'Create an API key'}
      description={made ? undefined : 'Give it only the access it needs.'}
    >
      {made ? (
        <div className="stack">
          <Secret value={made.key ?? ''} label="New API key" />
          <div className="banner banner-warn" role="note">
            Copy it now: it is shown only once. mediad keeps only its hash.
          </div>
          <div className="dialog-actions">
            <Button
              tone="primary"
              onClick={() => {
                reset();
                onClose();
              }}
            >
              Done
            </Button>
          </div>
        </div>
      ) : (
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            setBusy(true);
            setError(null);
            try {
              const expires =
                expiry === 'never' ? null : new Date(Date.now() + Number(expiry) * 86_400_000).toISOString();
              const key = ok(await api.POST('/keys', { body: { name: name || null, scopes, expires } })).data;
              setMade(key);
              onCreated();
            } catch (err) {
              setError(err);
            } finally {
              setBusy(false);
            }
          }}
        >
          <Field label="Name" hint="What uses it, e.g. “website uploads”.">
            {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />}
          </Field>
          <fieldset>
            <legend>Access</legend>
            <label className="check">
              <input type="radio" name="access-kind" checked={full} onChange={() => setFull(true)} />
              Full access (everything, including managing keys)
            </label>
            <label className="check">
              <input type="radio" name="access-kind" checked={!full} onChange={() => setFull(false)} />
              Choose per resource
            </label>
            {!full ? (
              <table className="data-table scope-table">
                <caption className="sr-only">Access per resource</caption>
                <thead>
                  <tr>
                    <th scope="col">Resource</th>
                    <th scope="col">None</th>
                    <th scope="col">Read</th>
                    <th scope="col">Read and write</th>
                  </tr>
                </thead>
                <tbody>
                  {FAMILIES.map((f) => (
                    <tr key={f.id}>
                      <th scope="row">{f.label}</th>
                      {ACCESS.map((a) => (
                        <td key={a}>
                          <input
                            type="radio"
                            name={`scope-${f.id}`}
                            aria-label={`${f.label}: ${a === 'none' ? 'no access' : a === 'read' ? 'read' : 'read and write'}`}
                            checked={access[f.id] === a}
                            onChange={() => setAccess((x) => ({ ...x, [f.id]: a }))}
                          />
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : null}
          </fieldset>
          <Field label="Expires">
            {(p) => (
              <select {...p} value={expiry} onChange={(e) => setExpiry(e.target.value)}>
                {EXPIRY.map((x) => (
                  <option key={x.value} value={x.value}>
                    {x.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <ErrorBanner error={error} />
          <div className="dialog-actions">
            <Button
              onClick={() => {
                reset();
                onClose();
              }}
            >
              Cancel
            </Button>
            <Button type="submit" tone="primary" busy={busy} disabled={scopes.length === 0}>
              Create key
            </Button>
          </div>
        </form>
      )}
    </FormDialog>
  );
}
