import { useState } from 'react';
import { api, asApiError, ok } from '../../lib/api/client';
import type { Data, Role } from '../../lib/api/types';
import { useToast } from '../../components/toast';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { DataTable } from '../../components/data-table';
import { EmptyState } from '../../components/empty-state';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { FormDialog } from '../../components/form-dialog';
import { Secret } from '../../components/secret';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { useSession, useSignedIn } from '../../lib/session';
import { useBusy } from '../../lib/use-busy';
import { ShownOnce } from '../../components/shown-once';

// The organisation's members (change role, remove; the API's last-owner refusal said plainly) and
// its invitations (create with email and role: the one-time link is shown once; list; revoke).

type Member = Data<'/orgs/{id}/members', 'get'>[number];
type Invitation = Data<'/orgs/{id}/invitations', 'get'>[number];
const ROLES: Role[] = ['owner', 'admin', 'member', 'viewer'];
const ROLE_HELP: Record<Role, string> = {
  owner: 'everything, including the organisation itself',
  admin: 'everything in its projects: keys, members, settings',
  member: 'reads and writes media, tasks, automations and webhooks',
  viewer: 'reads only',
};

function toRole(v: string): Role {
  return ROLES.find((r) => r === v) ?? 'viewer';
}

/** The roles someone with `mine` may give (only owners make owners). */
function grantable(mine: Role): Role[] {
  return mine === 'owner' ? ROLES : ROLES.filter((r) => r !== 'owner');
}

/** An API refusal as this page should say it (the last owner), else the API's own banner. */
function AdminError({ error }: { error: unknown }) {
  if (!error) return null;
  const e = asApiError(error);
  if (e.code === 'last_owner')
    return (
      <div className="banner banner-error" role="alert" data-code="last_owner">
        <div>
          <strong>An organisation needs at least one owner.</strong>
          <p>
            Make someone else an owner first, then change or remove this one. <span className="muted">({e.code})</span>
          </p>
        </div>
      </div>
    );
  return <ErrorBanner error={error} />;
}

export function MembersSection({ orgId, myRole, canManage }: { orgId: string; myRole: Role; canManage: boolean }) {
  const session = useSignedIn();
  const { refresh } = useSession();
  const toast = useToast();
  const [error, setError] = useState<unknown>(null);
  const list = useLoad(
    async () =>
      ok(await api.GET('/orgs/{id}/members', { params: { path: { id: orgId }, query: { page: 1, limit: 100 } } })),
    orgId,
  );
  const changeRole = async (m: Member, role: Role) => {
    setError(null);
    try {
      ok(
        await api.PATCH('/orgs/{id}/members/{user_id}', {
          params: { path: { id: orgId, user_id: m.user_id } },
          body: { role },
        }),
      );
      toast({ title: `${m.name} is now ${role}`, tone: 'success' });
      if (m.user_id === session.user.id) await refresh();
    } catch (err) {
      setError(err);
    }
    list.reload();
  };
  return (
    <section className="card stack" aria-labelledby="members-h">
      <h2 id="members-h">Members</h2>
      <AdminError error={error} />
      <ErrorBanner error={list.error} onRetry={list.reload} />
      {list.loading ? (
        <Skeleton lines={3} label="Loading members" />
      ) : (
        <DataTable<Member>
          caption="Members"
          rows={list.data?.data ?? []}
          rowKey={(m) => m.user_id}
          columns={[
            {
              key: 'name',
              header: 'Name',
              cell: (m) => (
                <>
                  {m.name}
                  {m.user_id === session.user.id ? <span className="badge inline-badge">you</span> : null}
                </>
              ),
            },
            { key: 'email', header: 'Email', cell: (m) => m.email },
            {
              key: 'role',
              header: 'Role',
              cell: (m) => {
                const may = canManage && (myRole === 'owner' || m.role !== 'owner');
                if (!may) return <span className="badge">{m.role}</span>;
                return (
                  <select
                    aria-label={`Role of ${m.name}`}
                    className="narrow-select"
                    value={m.role}
                    onChange={(e) => void changeRole(m, toRole(e.target.value))}
                  >
                    {grantable(myRole)
                      .concat(grantable(myRole).includes(m.role) ? [] : [m.role])
                      .map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                  </select>
                );
              },
            },
            { key: 'since', header: 'Member since', cell: (m) => <Time iso={m.created} /> },
            {
              key: 'actions',
              header: <span className="sr-only">Actions</span>,
              className: 'actions-cell',
              cell: (m) => {
                const self = m.user_id === session.user.id;
                const may = self || (canManage && (myRole === 'owner' || m.role !== 'owner'));
                if (!may) return null;
                return (
                  <ConfirmDialog
                    trigger={
                      <Button className="btn-small" tone="danger" aria-label={self ? 'Leave' : `Remove ${m.name}`}>
                        {self ? 'Leave' : 'Remove'}
                      </Button>
                    }
                    title={self ? 'Leave this organisation?' : `Remove ${m.name}?`}
                    description={
                      <p>
                        {self ? 'You' : m.name} lose{self ? '' : 's'} access to every project of this organisation at
                        once.
                      </p>
                    }
                    confirmLabel={self ? 'Leave' : 'Remove member'}
                    onConfirm={async () => {
                      try {
                        ok(
                          await api.DELETE('/orgs/{id}/members/{user_id}', {
                            params: { path: { id: orgId, user_id: m.user_id } },
                          }),
                        );
                      } catch (err) {
                        // Shown on the page too, where it stays after the dialog closes.
                        setError(err);
                        throw err;
                      }
                      setError(null);
                      toast({ title: self ? 'You left the organisation' : `${m.name} removed`, tone: 'success' });
                      if (self) await refresh();
                      else list.reload();
                    }}
                  />
                );
              },
            },
          ]}
        />
      )}
    </section>
  );
}

function InviteDialog({
  orgId,
  myRole,
  open,
  onOpenChange,
  onMade,
}: {
  orgId: string;
  myRole: Role;
  open: boolean;
  onOpenChange: (o: boolean) => void;
  onMade: () => void;
}) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const { busy, error, setError, submit } = useBusy();
  const [made, setMade] = useState<Invitation | null>(null);
  const close = () => {
    setEmail('');
    setRole('member');
    setError(null);
    setMade(null);
    onOpenChange(false);
  };
  const fieldError = (name: string) => asApiError(error).details.find((d) => d.field === name)?.message;
  return (
    <FormDialog
      open={open}
      onOpenChange={(o) => (o ? onOpenChange(true) : close())}
      title={made ? 'Invitation link' : 'Invite someone'}
      description={
        made
          ? 'Send this link to the person. It is shown only now: mediad keeps only a hash of it.'
          : 'They get a link to join this organisation with the role you choose.'
      }
    >
      {made?.url ? (
        <ShownOnce onDone={close}>
          <p>
            For <strong>{made.email}</strong> as <span className="badge">{made.role}</span>, valid until{' '}
            <Time iso={made.expires} />.
          </p>
          <Secret value={made.url} label="Invitation link" />
        </ShownOnce>
      ) : (
        <form
          onSubmit={submit(async () => {
            const inv = ok(
              await api.POST('/orgs/{id}/invitations', { params: { path: { id: orgId } }, body: { email, role } }),
            ).data;
            setMade(inv);
            onMade();
          })}
        >
          <Field label="Email" error={fieldError('email')}>
            {(p) => <input {...p} type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />}
          </Field>
          <Field label="Role" hint={ROLE_HELP[role]}>
            {(p) => (
              <select {...p} value={role} onChange={(e) => setRole(toRole(e.target.value))}>
                {grantable(myRole).map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <ErrorBanner error={error} />
          <div className="dialog-actions">
            <Button onClick={close}>Cancel</Button>
            <Button type="submit" tone="primary" busy={busy}>
              Create invitation
            </Button>
          </div>
        </form>
      )}
    </FormDialog>
  );
}

const STATUS_TONE: Record<Invitation['status'], string> = {
  pending: 'badge-warn',
  accepted: 'badge-ok',
  revoked: 'badge-danger',
  expired: '',
};

export function InvitationsSection({ orgId, myRole }: { orgId: string; myRole: Role }) {
  const toast = useToast();
  const [inviting, setInviting] = useState(false);
  const list = useLoad(
    async () =>
      ok(await api.GET('/orgs/{id}/invitations', { params: { path: { id: orgId }, query: { page: 1, limit: 100 } } })),
    orgId,
  );
  return (
    <section className="card stack" aria-labelledby="invitations-h">
      <div className="section-head">
        <h2 id="invitations-h">Invitations</h2>
        <Button tone="primary" onClick={() => setInviting(true)}>
          Invite someone
        </Button>
      </div>
      <ErrorBanner error={list.error} onRetry={list.reload} />
      {list.loading ? (
        <Skeleton lines={2} label="Loading invitations" />
      ) : (
        <DataTable<Invitation>
          caption="Invitations"
          rows={list.data?.data ?? []}
          rowKey={(i) => i.id}
          empty={<EmptyState title="No invitations" description="Invite someone by email to add them here." />}
          columns={[
            { key: 'email', header: 'Email', cell: (i) => i.email },
            { key: 'role', header: 'Role', cell: (i) => <span className="badge">{i.role}</span> },
            {
              key: 'status',
              header: 'Status',
              cell: (i) => <span className={`badge ${STATUS_TONE[i.status]}`}>{i.status}</span>,
            },
            { key: 'created', header: 'Created', cell: (i) => <Time iso={i.created} /> },
            { key: 'expires', header: 'Expires', cell: (i) => <Time iso={i.expires} /> },
            {
              key: 'actions',
              header: <span className="sr-only">Actions</span>,
              className: 'actions-cell',
              cell: (i) =>
                i.status === 'pending' ? (
                  <ConfirmDialog
                    trigger={
                      <Button className="btn-small" tone="danger" aria-label={`Revoke the invitation of ${i.email}`}>
                        Revoke
                      </Button>
                    }
                    title={`Revoke the invitation of ${i.email}?`}
                    description={<p>The link stops working at once.</p>}
                    confirmLabel="Revoke invitation"
                    onConfirm={async () => {
                      ok(
                        await api.DELETE('/orgs/{id}/invitations/{invitation_id}', {
                          params: { path: { id: orgId, invitation_id: i.id } },
                        }),
                      );
                      toast({ title: `Invitation of ${i.email} revoked`, tone: 'success' });
                      list.reload();
                    }}
                  />
                ) : null,
            },
          ]}
        />
      )}
      <InviteDialog orgId={orgId} myRole={myRole} open={inviting} onOpenChange={setInviting} onMade={list.reload} />
    </section>
  );
}
