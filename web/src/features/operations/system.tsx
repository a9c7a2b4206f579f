import { useParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import type { Data } from '../../lib/api/types';
import { DataTable } from '../../components/data-table';
import { ErrorBanner } from '../../components/error-banner';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { Time } from '../../components/time';
import { useLoad } from '../../lib/use-load';
import './operations.css';

// System status (GET /system, any signed-in person): the mediad version, database and storage
// backends, FFmpeg and ffprobe, the intelligence engines mediad doctor reports, and the queue's
// totals over the instance. The API answers no credentials, so nothing here is secret.

type System = Data<'/system', 'get'>;
type Local = System['engines']['local'][number];
type Provider = System['engines']['provider'][number];

function Found({ found }: { found: boolean }) {
  return found ? <span className="badge badge-ok">found</span> : <span className="badge badge-danger">missing</span>;
}

function duration(s: number | undefined): string {
  if (s === undefined) return 'none pending';
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

export default function SystemPage() {
  const { projectId = '' } = useParams();
  const sys = useLoad(async () => ok(await api.GET('/system')).data, projectId);
  const s = sys.data;
  return (
    <div className="page">
      <PageHeader
        title="System status"
        description="This mediad instance: its version, backends, FFmpeg, intelligence engines and queue (what mediad doctor reports)."
        actions={
          <button type="button" className="btn btn-small" onClick={sys.reload}>
            Refresh
          </button>
        }
      />
      <ErrorBanner error={sys.error} onRetry={sys.reload} />
      {sys.loading ? (
        <Skeleton lines={8} label="Loading the system status" />
      ) : s ? (
        <>
          {s.engines.problems.length > 0 ? (
            <div className="banner banner-error" role="note" aria-label="Problems">
              <ul>
                {s.engines.problems.map((p) => (
                  <li key={p}>{p}</li>
                ))}
              </ul>
            </div>
          ) : null}
          {s.engines.warnings.length > 0 ? (
            <div className="banner banner-warn" role="note" aria-label="Warnings">
              <ul>
                {s.engines.warnings.map((p) => (
                  <li key={p}>{p}</li>
                ))}
              </ul>
            </div>
          ) : null}
          <div className="grid-2">
            <section className="card stack" aria-labelledby="sys-instance">
              <h2 id="sys-instance" className="h2">
                Instance
              </h2>
              <dl className="facts">
                <dt>mediad</dt>
                <dd data-fact="version">{s.version}</dd>
                <dt>Node.js</dt>
                <dd>{s.node}</dd>
                <dt>Database</dt>
                <dd data-fact="database">{s.database.backend === 'postgres' ? 'PostgreSQL' : 'SQLite'}</dd>
                <dt>Storage</dt>
                <dd data-fact="storage">
                  {s.storage.backend === 's3' ? `S3${s.storage.bucket ? ` (bucket ${s.storage.bucket})` : ''}` : 'disk'}
                </dd>
              </dl>
            </section>
            <section className="card stack" aria-labelledby="sys-queue">
              <h2 id="sys-queue" className="h2">
                Queue health
              </h2>
              <dl className="facts">
                <dt>Pending</dt>
                <dd>{s.queue.pending}</dd>
                <dt>Delayed</dt>
                <dd>{s.queue.delayed}</dd>
                <dt>Processing</dt>
                <dd>{s.queue.processing}</dd>
                <dt>Waiting (workflows)</dt>
                <dd>{s.queue.waiting}</dd>
                <dt>Failed (24 h)</dt>
                <dd>{s.queue.failed}</dd>
                <dt>Oldest pending</dt>
                <dd>{duration(s.queue.oldest_pending_seconds)}</dd>
              </dl>
            </section>
          </div>
          <section className="stack" aria-labelledby="sys-ffmpeg">
            <h2 id="sys-ffmpeg" className="h2">
              FFmpeg
            </h2>
            <DataTable
              caption="FFmpeg tools"
              rows={s.ffmpeg}
              rowKey={(t) => t.tool}
              columns={[
                { key: 'tool', header: 'Tool', cell: (t) => <code>{t.tool}</code> },
                { key: 'found', header: 'Found', cell: (t) => <Found found={t.found} /> },
                { key: 'version', header: 'Version', cell: (t) => <span data-version>{t.version ?? '—'}</span> },
              ]}
            />
          </section>
          <section className="stack" aria-labelledby="sys-engines">
            <h2 id="sys-engines" className="h2">
              Intelligence engines
            </h2>
            <p className="small muted">
              Checked <Time iso={s.engines.checked} /> (remembered for 5 minutes).
            </p>
            <DataTable<Local>
              caption="Local engines"
              rows={s.engines.local}
              rowKey={(e) => e.engine}
              columns={[
                { key: 'engine', header: 'Engine', cell: (e) => <code>{e.engine}</code> },
                { key: 'found', header: 'Found', cell: (e) => <Found found={e.found} /> },
                { key: 'version', header: 'Version', cell: (e) => e.version ?? '—' },
                { key: 'model', header: 'Model', cell: (e) => e.model ?? '—' },
                { key: 'message', header: 'Note', cell: (e) => <span className="small">{e.message ?? ''}</span> },
              ]}
            />
            {s.engines.provider.length > 0 ? (
              <DataTable<Provider>
                caption="Provider"
                rows={s.engines.provider}
                rowKey={(p) => `${p.role}:${p.model}`}
                columns={[
                  { key: 'role', header: 'Role', cell: (p) => p.role },
                  { key: 'url', header: 'Address', cell: (p) => <code className="wrap">{p.base_url}</code> },
                  { key: 'model', header: 'Model', cell: (p) => <code>{p.model}</code> },
                  {
                    key: 'ok',
                    header: 'Reachable',
                    cell: (p) =>
                      p.reachable ? (
                        <span className="badge badge-ok">{p.model_listed ? 'yes, model listed' : 'yes'}</span>
                      ) : (
                        <span className="badge badge-danger">no</span>
                      ),
                  },
                ]}
              />
            ) : (
              <p className="muted">No provider is configured.</p>
            )}
            <DataTable<[string, string]>
              caption="Engine of each task kind"
              rows={Object.entries(s.engines.kinds)}
              rowKey={([k]) => k}
              columns={[
                { key: 'kind', header: 'Task kind', cell: ([k]) => <code>{k}</code> },
                { key: 'engine', header: 'Engine', cell: ([, e]) => e },
              ]}
            />
          </section>
        </>
      ) : null}
    </div>
  );
}
