import { Tabs } from 'radix-ui';
import { Link, useParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import type { Task } from '../../lib/api/types';
import { CopyButton } from '../../components/copy-button';
import { DataTable } from '../../components/data-table';
import { EmptyState } from '../../components/empty-state';
import { ErrorBanner } from '../../components/error-banner';
import { formatBytes } from '../../lib/format';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import { membershipOf, permissionsFor, useSignedIn } from '../../lib/session';
import { firstStepsNode, firstStepsShell } from './overview-snippets';
import { useLocalCa } from '../../lib/local-ca';

// The project at a glance: counts from GET /project/stats, the latest failures (linking to the
// tasks page and their media), and getting-started snippets with this server's URL, its local CA
// (GET /auth/status, local-ca.ts) and the project's id: they run as copied with MEDIAD_API_KEY set.

function Stat({ label, value, to }: { label: string; value: string; to?: string }) {
  const body = (
    <>
      <span className="stat-value">{value}</span>
      <span className="stat-label">{label}</span>
    </>
  );
  return <div className="stat">{to ? <Link to={to}>{body}</Link> : body}</div>;
}

function mediaIdOf(t: Task): string | undefined {
  const input = t.input;
  if (typeof input === 'object' && input !== null && 'media_id' in input && typeof input.media_id === 'string')
    return input.media_id;
  return undefined;
}

export default function OverviewPage() {
  const { projectId } = useParams();
  const session = useSignedIn();
  const member = membershipOf(session, projectId);
  const project = member?.projects.find((p) => p.id === projectId);
  const { canManage } = permissionsFor(member?.role);
  const stats = useLoad(async () => ok(await api.GET('/project/stats')).data, `stats:${projectId}`, 15000);
  const base = window.location.origin;
  const localCa = useLocalCa();
  const ctx = { base, caFile: localCa?.file ?? null, project: projectId };
  const curl = firstStepsShell(ctx);
  const js = firstStepsNode(ctx);

  return (
    <div className="page">
      <PageHeader
        title={project?.name ?? 'Overview'}
        description={
          <>
            {member?.org.name} · project <code>{projectId}</code> · your role: {member?.role}
          </>
        }
      />
      <ErrorBanner error={stats.error} onRetry={stats.reload} />
      {stats.loading ? (
        <Skeleton lines={2} label="Loading the project's figures" />
      ) : stats.data ? (
        <div className="stats">
          <Stat label="Media" value={stats.data.media.toLocaleString()} to={`/p/${projectId}/media`} />
          <Stat label="Storage used" value={formatBytes(stats.data.storage_bytes)} />
          <Stat
            label="Tasks today (UTC)"
            value={stats.data.tasks_today.toLocaleString()}
            to={`/p/${projectId}/tasks`}
          />
          <Stat
            label="Failures in 24 h"
            value={stats.data.failed_24h.toLocaleString()}
            to={`/p/${projectId}/tasks?status=failed`}
          />
        </div>
      ) : null}

      <section className="stack" aria-labelledby="failures-h">
        <h2 id="failures-h">Latest failures</h2>
        {stats.data ? (
          <DataTable<Task>
            caption="Latest failed tasks"
            rows={stats.data.recent_failures}
            rowKey={(t) => t.id}
            empty={<EmptyState title="No failed tasks" description="Failed tasks appear here with their error." />}
            columns={[
              {
                key: 'task',
                header: 'Task',
                cell: (t) => (
                  <>
                    <Link to={`/p/${projectId}/tasks?status=failed&kind=${t.kind}`}>{t.kind}</Link>
                    <br />
                    <code className="muted small">{t.id}</code>
                  </>
                ),
              },
              {
                key: 'error',
                header: 'Error',
                cell: (t) => (
                  <>
                    {t.error ?? '—'}
                    {t.error_code ? (
                      <>
                        {' '}
                        <code className="badge">{t.error_code}</code>
                      </>
                    ) : null}
                    <span className="muted small"> · {t.attempts} attempts</span>
                  </>
                ),
              },
              {
                key: 'media',
                header: 'Media',
                cell: (t) => {
                  const m = mediaIdOf(t);
                  return m ? <Link to={`/p/${projectId}/media/${m}`}>{m}</Link> : <span className="muted">—</span>;
                },
              },
              { key: 'when', header: 'When', cell: (t) => <Time iso={t.finished ?? t.updated} /> },
            ]}
          />
        ) : null}
      </section>

      <section className="card stack" aria-labelledby="start-h">
        <h2 id="start-h">Getting started</h2>
        <p className="muted">
          Call the API at <code>{base}</code> with an API key of this project
          {canManage ? (
            <>
              {' '}
              (<Link to={`/p/${projectId}/keys`}>create one</Link>)
            </>
          ) : null}
          , set in <code>MEDIAD_API_KEY</code>: <code>export MEDIAD_API_KEY=mdk_…</code>. The snippets upload a video
          from your machine, make a poster from it and wait for the task. The full reference is at{' '}
          <a href="/docs">/docs</a>.
        </p>
        {localCa ? (
          <p className="muted">
            This server&rsquo;s certificate comes from its own authority, <code>{localCa.file}</code> on the
            server&rsquo;s machine; elsewhere, <a href={localCa.url}>download it</a> and pass that file instead.
          </p>
        ) : null}
        {/* Shown once the CA file is known: a snippet without it would not run. */}
        {localCa === undefined ? (
          <Skeleton lines={6} label="Loading the snippets" />
        ) : (
          <Tabs.Root defaultValue="curl">
            <Tabs.List className="tabs-list" aria-label="Snippet language">
              <Tabs.Trigger className="tabs-trigger" value="curl">
                curl
              </Tabs.Trigger>
              <Tabs.Trigger className="tabs-trigger" value="js">
                JavaScript
              </Tabs.Trigger>
            </Tabs.List>
            <Tabs.Content value="curl" className="stack snippet">
              <pre tabIndex={0}>
                <code>{curl}</code>
              </pre>
              <CopyButton value={curl} label="Copy snippet" />
            </Tabs.Content>
            <Tabs.Content value="js" className="stack snippet">
              <pre tabIndex={0}>
                <code>{js}</code>
              </pre>
              <CopyButton value={js} label="Copy snippet" />
            </Tabs.Content>
          </Tabs.Root>
        )}
      </section>
    </div>
  );
}
