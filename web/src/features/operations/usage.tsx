import { lazy, Suspense, useMemo } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { api, ok } from '../../lib/api/client';
import type { Data } from '../../lib/api/types';
import { ErrorBanner } from '../../components/error-banner';
import { formatBytes } from '../../lib/format';
import { PageHeader } from '../../components/page-header';
import { Skeleton } from '../../components/skeleton';
import { useLoad } from '../../lib/use-load';
import type { ChartSeries } from './usage-chart';
import './operations.css';
import { TableScroll } from '../../components/table-scroll';

// Usage of the project (GET /usage?range=24h|7d|30d): storage now, bytes delivered, processing
// seconds per task kind and tasks per status, as totals and as charts (uPlot, loaded on demand).
// Every chart has a table of the same figures (and the totals as text), for screen readers and
// for copying.

type Usage = Data<'/usage', 'get'>;
const RANGES = ['24h', '7d', '30d'] as const;
type Range = (typeof RANGES)[number];
const isRange = (v: string | null): v is Range => RANGES.some((r) => r === v);
const RANGE_LABEL: Record<Range, string> = { '24h': '24 hours', '7d': '7 days', '30d': '30 days' };

const Chart = lazy(() => import('./usage-chart'));
const COLORS = ['#4f46e5', '#0d9488', '#d97706', '#db2777', '#2563eb', '#65a30d', '#9333ea', '#dc2626', '#0891b2'];
const STATUS_COLORS = { completed: '#059669', failed: '#dc2626', cancelled: '#6b7280' };

const int = new Intl.NumberFormat();
const fmtInt = (n: number) => int.format(n);
const fmtSeconds = (n: number) =>
  n >= 120 ? `${(n / 60).toFixed(1)} min` : `${n.toFixed(n === 0 || n >= 10 ? 0 : n < 1 ? 2 : 1)} s`;

function bucketLabel(iso: string, interval: 'hour' | 'day'): string {
  return interval === 'hour' ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : iso.slice(0, 10);
}

function ChartCard({
  title,
  summary,
  usage,
  series,
  format,
}: {
  title: string;
  summary: string;
  usage: Usage;
  series: ChartSeries[];
  format: (n: number) => string;
}) {
  const rows = usage.series.time
    .map((t, i) => ({ t, values: series.map((s) => s.values[i] ?? 0) }))
    .filter((r) => r.values.some((v) => v !== 0));
  return (
    <figure className="card chart-card" aria-label={title}>
      <h2>{title}</h2>
      <figcaption className="muted">{summary}</figcaption>
      <Suspense fallback={<Skeleton lines={4} label={`Loading the ${title} chart`} />}>
        <Chart times={usage.series.time} series={series} interval={usage.interval} format={format} />
      </Suspense>
      <details className="chart-table">
        <summary>Table: {title}</summary>
        {rows.length === 0 ? (
          <p className="muted">Nothing in this range.</p>
        ) : (
          <TableScroll>
            <table className="data-table">
              <caption className="sr-only">
                {title}, per {usage.interval}
              </caption>
              <thead>
                <tr>
                  <th scope="col">{usage.interval === 'hour' ? 'Hour' : 'Day'}</th>
                  {series.map((s) => (
                    <th scope="col" key={s.label} className="num">
                      {s.label}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.t}>
                    <th scope="row">{bucketLabel(r.t, usage.interval)}</th>
                    {r.values.map((v, i) => (
                      <td key={series[i]?.label ?? i} className="num">
                        {format(v)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </details>
    </figure>
  );
}

function Charts({ usage }: { usage: Usage }) {
  const kinds = useMemo(() => Object.keys(usage.totals.processing_seconds).sort(), [usage]);
  const charts = useMemo(
    () => ({
      delivered: [{ label: 'Bytes delivered', values: usage.series.bytes_delivered, color: COLORS[0] ?? '#4f46e5' }],
      tasks: (['completed', 'failed', 'cancelled'] as const).map((s) => ({
        label: s[0]!.toUpperCase() + s.slice(1),
        values: usage.series.tasks[s],
        color: STATUS_COLORS[s],
      })),
      processing: kinds.map((k, i) => ({
        label: k,
        values: usage.series.processing_seconds[k] ?? [],
        color: COLORS[i % COLORS.length] ?? '#4f46e5',
      })),
    }),
    [usage, kinds],
  );
  const t = usage.totals.tasks;
  return (
    <div className="stack">
      <ChartCard
        title="Bytes delivered"
        summary={`${formatBytes(usage.totals.bytes_delivered)} delivered in the last ${RANGE_LABEL[usage.range]}.`}
        usage={usage}
        series={charts.delivered}
        format={formatBytes}
      />
      <ChartCard
        title="Tasks by status"
        summary={`${fmtInt(t.completed)} completed, ${fmtInt(t.failed)} failed, ${fmtInt(t.cancelled)} cancelled.`}
        usage={usage}
        series={charts.tasks}
        format={fmtInt}
      />
      <ChartCard
        title="Processing time by kind"
        summary={
          kinds.length === 0
            ? 'No task ran in this range.'
            : kinds.map((k) => `${k}: ${fmtSeconds(usage.totals.processing_seconds[k] ?? 0)}`).join(', ') + '.'
        }
        usage={usage}
        series={charts.processing}
        format={fmtSeconds}
      />
    </div>
  );
}

export default function UsagePage() {
  const { projectId = '' } = useParams();
  const [params] = useSearchParams();
  const r = params.get('range');
  const range: Range = isRange(r) ? r : '7d';
  const usage = useLoad(
    async () => ok(await api.GET('/usage', { params: { query: { range } } })).data,
    `${projectId}:${range}`,
  );
  const u = usage.data;
  const processing = u ? Object.values(u.totals.processing_seconds).reduce((a, b) => a + b, 0) : 0;
  return (
    <div className="page">
      <PageHeader
        title="Usage"
        description="What this project stores, delivers and processes, from the counters the API keeps (times in UTC)."
        actions={
          <nav className="range-tabs" aria-label="Range">
            {RANGES.map((x) => (
              <Link
                key={x}
                to={`?range=${x}`}
                className="btn btn-small"
                aria-current={x === range ? 'page' : undefined}
              >
                {RANGE_LABEL[x]}
              </Link>
            ))}
          </nav>
        }
      />
      <ErrorBanner error={usage.error} onRetry={usage.reload} />
      {usage.loading ? (
        <Skeleton lines={6} label="Loading usage" />
      ) : u ? (
        <>
          <section className="stats" aria-label="Totals">
            <div className="stat" data-stat="storage">
              <span className="stat-value">{formatBytes(u.storage_bytes)}</span>
              <span className="stat-label">Stored now ({fmtInt(u.storage_bytes)} bytes)</span>
            </div>
            <div className="stat" data-stat="delivered">
              <span className="stat-value">{formatBytes(u.totals.bytes_delivered)}</span>
              <span className="stat-label">Delivered ({fmtInt(u.totals.bytes_delivered)} bytes)</span>
            </div>
            <div className="stat" data-stat="tasks">
              <span className="stat-value">{fmtInt(u.totals.tasks.completed)}</span>
              <span className="stat-label">
                Tasks completed ({fmtInt(u.totals.tasks.failed)} failed, {fmtInt(u.totals.tasks.cancelled)} cancelled)
              </span>
            </div>
            <div className="stat" data-stat="processing">
              <span className="stat-value">{fmtSeconds(processing)}</span>
              <span className="stat-label">Processing time</span>
            </div>
          </section>
          <Charts usage={u} />
        </>
      ) : null}
    </div>
  );
}
