import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import type { Data, Role } from '../../lib/api/types';
import { useToast } from '../../components/toast';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { DataTable } from '../../components/data-table';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { FormDialog } from '../../components/form-dialog';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { firstProject, membershipOf, permissionsFor, useSession, useSignedIn } from '../../lib/session';
import { InvitationsSection, MembersSection } from './members';
import './admin.css';
import { useBusy } from '../../lib/use-busy';

// Administration of the organisation that holds the current project (owners and admins; instance
// administrators act as owners): rename or delete the organisation, its projects (create, rename,
// delete with typed confirmation), members and roles, invitations. Instance administrators also
// create organisations. Every action is the public API's; its refusals are shown as it answers.

type OrgProject = Data<'/orgs/{id}/projects', 'get'>[number];

/** A one-field rename form in a dialog. */
/** A name asked for in a dialog: a new organisation's or project's (empty), or a new name for one. */
function NameDialog({
  open,
  onOpenChange,
  title,
  description,
  initial = '',
  submitLabel = 'Save',
  onSubmit,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  description?: string;
  /** The name the field starts with (and returns to when the dialog opens or closes). */
  initial?: string;
  submitLabel?: string;
  onSubmit: (name: string) => Promise<unknown>;
}) {
  const [name, setName] = useState(initial);
  const { busy, error, setError, submit } = useBusy();
  return (
    <FormDialog
      open={open}
      onOpenChange={(o) => {
        setName(initial);
        setError(null);
        onOpenChange(o);
      }}
      title={title}
      {...(description ? { description } : {})}
    >
      <form
        onSubmit={submit(async () => {
          await onSubmit(name.trim());
          setName(initial);
          onOpenChange(false);
        })}
      >
        <Field label="Name">
          {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />}
        </Field>
        <ErrorBanner error={error} />
        <div className="dialog-actions">
          <Button onClick={() => onOpenChange(false)}>Cancel</Button>
          <Button type="submit" tone="primary" busy={busy}>
            {submitLabel}
          </Button>
        </div>
      </form>
    </FormDialog>
  );
}

function ProjectsSection({ orgId, canManage }: { orgId: string; canManage: boolean }) {
  const { projectId = '' } = useParams();
  const { refresh } = useSession();
  const navigate = useNavigate();
  const toast = useToast();
  const [creating, setCreating] = useState(false);
  const [renaming, setRenaming] = useState<OrgProject | null>(null);
  const list = useLoad(
    async () =>
      ok(await api.GET('/orgs/{id}/projects', { params: { path: { id: orgId }, query: { page: 1, limit: 100 } } })),
    orgId,
  );
  return (
    <section className="card stack" aria-labelledby="projects-h">
      <div className="section-head">
        <h2 id="projects-h">Projects</h2>
        {canManage ? (
          <Button tone="primary" onClick={() => setCreating(true)}>
            New project
          </Button>
        ) : null}
      </div>
      <ErrorBanner error={list.error} onRetry={list.reload} />
      {list.loading ? (
        <Skeleton lines={3} label="Loading projects" />
      ) : (
        <DataTable<OrgProject>
          caption="Projects"
          rows={list.data?.data ?? []}
          rowKey={(p) => p.id}
          columns={[
            {
              key: 'name',
              header: 'Name',
              cell: (p) => (
                <>
                  <Link to={`/p/${p.id}/overview`}>{p.name}</Link>
                  {p.id === projectId ? <span className="badge inline-badge">this project</span> : null}
                </>
              ),
            },
            { key: 'id', header: 'Id', cell: (p) => <code className="small">{p.id}</code> },
            { key: 'created', header: 'Created', cell: (p) => <Time iso={p.created} /> },
            {
              key: 'actions',
              header: <span className="sr-only">Actions</span>,
              className: 'actions-cell',
              cell: (p) =>
                canManage ? (
                  <div className="row-actions">
                    <Button className="btn-small" onClick={() => setRenaming(p)} aria-label={`Rename ${p.name}`}>
                      Rename
                    </Button>
                    <ConfirmDialog
                      trigger={
                        <Button className="btn-small" tone="danger" aria-label={`Delete ${p.name}`}>
                          Delete
                        </Button>
                      }
                      title={`Delete the project ${p.name}?`}
                      description={
                        <p>
                          Its media, files, tasks, automations, webhooks and keys are deleted for good; its keys stop
                          working at once.
                        </p>
                      }
                      typed={p.name}
                      confirmLabel="Delete project"
                      onConfirm={async () => {
                        ok(
                          await api.DELETE('/orgs/{id}/projects/{project_id}', {
                            params: { path: { id: orgId, project_id: p.id } },
                            body: { confirm: p.name },
                          }),
                        );
                        toast({ title: `Project ${p.name} deleted`, tone: 'success' });
                        const next = await refresh();
                        list.reload();
                        if (p.id === projectId) {
                          const other = next.status === 'signed-in' ? firstProject(next.session) : null;
                          navigate(other ? `/p/${other}/admin` : '/account', { replace: true });
                        }
                      }}
                    />
                  </div>
                ) : null,
            },
          ]}
        />
      )}
      <NameDialog
        open={creating}
        onOpenChange={setCreating}
        title="New project"
        description="A project has its own media, tasks, keys and webhooks."
        submitLabel="Create project"
        onSubmit={async (name) => {
          const made = ok(
            await api.POST('/orgs/{id}/projects', { params: { path: { id: orgId } }, body: { name } }),
          ).data;
          toast({ title: `Project ${made.name} created`, tone: 'success' });
          await refresh();
          list.reload();
        }}
      />
      {renaming ? (
        <NameDialog
          key={renaming.id}
          open
          onOpenChange={(o) => {
            if (!o) setRenaming(null);
          }}
          title={`Rename ${renaming.name}`}
          initial={renaming.name}
          onSubmit={async (name) => {
            ok(
              await api.PATCH('/orgs/{id}/projects/{project_id}', {
                params: { path: { id: orgId, project_id: renaming.id } },
                body: { name },
              }),
            );
            toast({ title: `Project renamed to ${name}`, tone: 'success' });
            await refresh();
            list.reload();
          }}
        />
      ) : null}
    </section>
  );
}

function OrgSection({ orgId, name, role }: { orgId: string; name: string; role: Role }) {
  const session = useSignedIn();
  const { refresh } = useSession();
  const navigate = useNavigate();
  const toast = useToast();
  const [renaming, setRenaming] = useState(false);
  const [creating, setCreating] = useState(false);
  const isOwner = role === 'owner' || session.user.is_admin;
  return (
    <section className="card stack" aria-labelledby="org-h">
      <div className="section-head">
        <h2 id="org-h">
          Organisation <span className="org-name">{name}</span>
        </h2>
        <div className="row-actions">
          {isOwner ? (
            <>
              <Button onClick={() => setRenaming(true)}>Rename organisation</Button>
              <ConfirmDialog
                trigger={<Button tone="danger">Delete organisation</Button>}
                title={`Delete the organisation ${name}?`}
                description={
                  <p>All its projects, their media, files, keys and webhooks, and its members' access go.</p>
                }
                typed={name}
                confirmLabel="Delete organisation"
                onConfirm={async () => {
                  ok(await api.DELETE('/orgs/{id}', { params: { path: { id: orgId } }, body: { confirm: name } }));
                  toast({ title: `Organisation ${name} deleted`, tone: 'success' });
                  const next = await refresh();
                  const other = next.status === 'signed-in' ? firstProject(next.session) : null;
                  navigate(other ? `/p/${other}/admin` : '/account', { replace: true });
                }}
              />
            </>
          ) : null}
          {session.user.is_admin ? (
            <Button tone="primary" onClick={() => setCreating(true)}>
              New organisation
            </Button>
          ) : null}
        </div>
      </div>
      <p className="muted small">
        Your role: <span className="badge">{role}</span>
        {session.user.is_admin ? ' · instance administrator (acts as owner of every organisation)' : ''} · id{' '}
        <code>{orgId}</code>
      </p>
      <NameDialog
        key={name}
        open={renaming}
        onOpenChange={setRenaming}
        title="Rename the organisation"
        initial={name}
        onSubmit={async (next) => {
          ok(await api.PATCH('/orgs/{id}', { params: { path: { id: orgId } }, body: { name: next } }));
          toast({ title: `Organisation renamed to ${next}`, tone: 'success' });
          await refresh();
        }}
      />
      <NameDialog
        open={creating}
        onOpenChange={setCreating}
        title="New organisation"
        description="You become its owner; add a project to it next."
        submitLabel="Create organisation"
        onSubmit={async (orgName) => {
          const made = ok(await api.POST('/orgs', { body: { name: orgName } })).data;
          // An organisation starts without a project: make a first one so it can be opened.
          const project = ok(
            await api.POST('/orgs/{id}/projects', { params: { path: { id: made.id } }, body: { name: 'Default' } }),
          ).data;
          toast({ title: `Organisation ${made.name} created`, tone: 'success' });
          await refresh();
          navigate(`/p/${project.id}/admin`);
        }}
      />
    </section>
  );
}

export default function AdminPage() {
  const { projectId } = useParams();
  const session = useSignedIn();
  const membership = membershipOf(session, projectId);
  if (!membership) return null;
  const role = session.user.is_admin ? 'owner' : membership.role;
  const { canManage } = permissionsFor(role);
  return (
    <div className="page">
      <PageHeader
        title="Organisation"
        description="Projects, members and invitations of the organisation that holds this project."
        actions={<Link to={`/p/${projectId}/audit`}>Audit log →</Link>}
      />
      {!canManage ? (
        <div className="banner" role="status">
          You are a {membership.role} here: you can see the members, and owners and admins change them.
        </div>
      ) : null}
      <OrgSection orgId={membership.org.id} name={membership.org.name} role={membership.role} />
      <ProjectsSection orgId={membership.org.id} canManage={canManage} />
      <MembersSection orgId={membership.org.id} myRole={role} canManage={canManage} />
      {canManage ? <InvitationsSection orgId={membership.org.id} myRole={role} /> : null}
    </div>
  );
}
