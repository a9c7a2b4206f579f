import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import { SwitchControl } from '../../components/option-form';
import { useToast } from '../../components/toast';
import { CopyAsCurl } from '../../components/copy-as-curl';
import { DataTable } from '../../components/data-table';
import { EmptyState } from '../../components/empty-state';
import { ErrorBanner } from '../../components/error-banner';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { membershipOf, permissionsFor, useSignedIn } from '../../lib/session';
import { countSteps, type Automation } from './automations-model';
import './automations.css';

// Automations (GET /automations): each with its trigger, its number of steps and an on/off switch
// (PATCH /automations/{id} {status: active | paused}; members and up, viewers read); a name opens the
// builder, "New automation" an empty one.

function StatusSwitch({ automation, onChanged }: { automation: Automation; onChanged: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const toast = useToast();
  const active = automation.status === 'active';
  const label = `${automation.name ?? automation.id} enabled`;
  const set = async (on: boolean) => {
    setBusy(true);
    setError(null);
    try {
      ok(
        await api.PATCH('/automations/{id}', {
          params: { path: { id: automation.id } },
          body: { status: on ? 'active' : 'paused' },
        }),
      );
      toast({ title: `${automation.name ?? automation.id} ${on ? 'enabled' : 'paused'}`, tone: 'success' });
      onChanged();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div aria-busy={busy || undefined}>
      <SwitchControl id={`switch-${automation.id}`} label={label} checked={active} onChange={(v) => void set(v)} />
      <ErrorBanner error={error} />
    </div>
  );
}

export default function AutomationsPage() {
  const { projectId = '' } = useParams();
  const session = useSignedIn();
  const { canWrite } = permissionsFor(membershipOf(session, projectId)?.role);
  const list = useLoad(
    async () => ok(await api.GET('/automations', { params: { query: { page: 1, limit: 100 } } })),
    projectId,
  );
  const rows = list.data?.data ?? [];
  return (
    <div className="page">
      <PageHeader
        title="Automations"
        description="Workflows that run by themselves when an event occurs: a trigger, ordered steps, and conditions that branch."
        actions={
          <>
            <CopyAsCurl path="/automations" />
            {canWrite ? (
              <Link className="btn btn-primary" to={`/p/${projectId}/automations/new`}>
                New automation
              </Link>
            ) : null}
          </>
        }
      />
      <ErrorBanner error={list.error} onRetry={list.reload} />
      {list.loading ? (
        <Skeleton lines={4} label="Loading automations" />
      ) : (
        <DataTable
          caption="Automations"
          rows={rows}
          rowKey={(a) => a.id}
          empty={
            <EmptyState
              title="No automations"
              description="An automation runs a workflow on every new media (or file, or task) that matches its trigger."
              action={
                canWrite ? (
                  <Link className="btn btn-primary" to={`/p/${projectId}/automations/new`}>
                    New automation
                  </Link>
                ) : undefined
              }
            />
          }
          columns={[
            {
              key: 'name',
              header: 'Automation',
              cell: (a) => (
                <div>
                  <Link to={`/p/${projectId}/automations/${a.id}`}>{a.name ?? a.id}</Link>
                  {a.description ? <div className="small muted">{a.description}</div> : null}
                  <div className="small muted">
                    <code>{a.id}</code>
                  </div>
                </div>
              ),
            },
            {
              key: 'trigger',
              header: 'Trigger',
              cell: (a) => <code>{typeof a.trigger.event === 'string' ? a.trigger.event : '—'}</code>,
            },
            { key: 'steps', header: 'Steps', cell: (a) => countSteps(a.workflow) },
            {
              key: 'status',
              header: 'Enabled',
              cell: (a) =>
                canWrite ? (
                  <StatusSwitch automation={a} onChanged={list.reload} />
                ) : (
                  <span className={`badge ${a.status === 'active' ? 'badge-ok' : ''}`}>{a.status}</span>
                ),
            },
            { key: 'updated', header: 'Updated', cell: (a) => <Time iso={a.updated} /> },
            {
              key: 'runs',
              header: <span className="sr-only">Links</span>,
              cell: (a) => (
                <Link to={`/p/${projectId}/automations/${a.id}#runs`} className="small">
                  Run history
                </Link>
              ),
            },
          ]}
        />
      )}
    </div>
  );
}
