import type { Deps } from '../../deps.js';

// GET /usage: a project's figures over a range, from the usage counters (db/queries/usage.ts):
// totals and a series per hour (24h) or per UTC day (7d, 30d), in columns as chart libraries
// (uPlot) take them. Storage is what the project's files hold now.

export const USAGE_RANGES = ['24h', '7d', '30d'] as const;
export type UsageRange = (typeof USAGE_RANGES)[number];

const SHAPE: Record<UsageRange, { period: 'h' | 'd'; count: number; stepMs: number }> = {
  '24h': { period: 'h', count: 24, stepMs: 3600_000 },
  '7d': { period: 'd', count: 7, stepMs: 86_400_000 },
  '30d': { period: 'd', count: 30, stepMs: 86_400_000 },
};

const END_STATUSES = ['completed', 'failed', 'cancelled'] as const;
type EndStatus = (typeof END_STATUSES)[number];

export interface Usage {
  object: 'usage';
  range: UsageRange;
  interval: 'hour' | 'day';
  /** Start of the first bucket and end of the last (the current hour or day, still counting). */
  start: string;
  end: string;
  storage_bytes: number;
  totals: {
    bytes_delivered: number;
    processing_seconds: Record<string, number>;
    tasks: Record<EndStatus, number>;
    /** Image URLs (issue 24): results computed, and their bytes. */
    image_transformations: number;
    image_derived_bytes: number;
  };
  series: {
    /** Start of each bucket (ISO); every other array has one value per bucket. */
    time: string[];
    bytes_delivered: number[];
    processing_seconds: Record<string, number[]>;
    tasks: Record<EndStatus, number[]>;
  };
}

const seconds = (ms: number) => Math.round(ms) / 1000;

export async function getUsage(deps: Pick<Deps, 'db' | 'clock'>, projectId: string, range: UsageRange): Promise<Usage> {
  const { period, count, stepMs } = SHAPE[range];
  const now = deps.clock.now();
  const current =
    period === 'h'
      ? Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), now.getUTCHours())
      : Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const starts = Array.from({ length: count }, (_, i) => new Date(current - (count - 1 - i) * stepMs).toISOString());
  const key = (iso: string) => (period === 'h' ? iso.slice(0, 13) : iso.slice(0, 10));
  const index = new Map(starts.map((s, i) => [key(s), i]));

  const [rows, storage] = await Promise.all([
    deps.db
      .selectFrom('usage_counters')
      .select(['bucket', 'metric', 'value'])
      .where('project_id', '=', projectId)
      .where('period', '=', period)
      .where('bucket', '>=', key(starts[0]!))
      .where('bucket', '<=', key(starts[count - 1]!))
      .execute(),
    deps.db
      .selectFrom('files')
      .select((eb) => eb.fn.sum<number | string | null>('filesize').as('bytes'))
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow(),
  ]);

  const zeros = () => new Array<number>(count).fill(0);
  const series: Usage['series'] = {
    time: starts,
    bytes_delivered: zeros(),
    processing_seconds: {},
    tasks: { completed: zeros(), failed: zeros(), cancelled: zeros() },
  };
  const taskMs: Record<string, number[]> = {};
  const images = { image_transformations: 0, image_derived_bytes: 0 };
  for (const row of rows) {
    const i = index.get(row.bucket);
    if (i === undefined) continue;
    const value = Number(row.value);
    const [name, detail] = row.metric.split(':', 2);
    if (name === 'bytes_delivered') series.bytes_delivered[i]! += value;
    else if (name === 'image_transformations' || name === 'image_derived_bytes') images[name] += value;
    else if (name === 'task_ms' && detail) (taskMs[detail] ??= zeros())[i]! += value;
    else if (name === 'tasks' && (END_STATUSES as readonly string[]).includes(detail ?? '')) {
      const status = END_STATUSES.find((s) => s === detail)!;
      series.tasks[status][i]! += value;
    }
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const totals: Usage['totals'] = {
    bytes_delivered: sum(series.bytes_delivered),
    processing_seconds: {},
    tasks: {
      completed: sum(series.tasks.completed),
      failed: sum(series.tasks.failed),
      cancelled: sum(series.tasks.cancelled),
    },
    ...images,
  };
  for (const [kind, ms] of Object.entries(taskMs).sort(([a], [b]) => a.localeCompare(b))) {
    series.processing_seconds[kind] = ms.map(seconds);
    totals.processing_seconds[kind] = seconds(sum(ms));
  }
  return {
    object: 'usage',
    range,
    interval: period === 'h' ? 'hour' : 'day',
    start: starts[0]!,
    end: new Date(current + stepMs).toISOString(),
    storage_bytes: Number(storage.bytes ?? 0),
    totals,
    series,
  };
}
