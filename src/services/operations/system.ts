import type { Config } from '../../config.js';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import { doctor, type DoctorReport } from '../../doctor.js';
import { queueTotals, type QueueCounts } from './queue.js';

// GET /system: what this mediad is and runs on, for any authenticated caller. Nothing secret:
// no database URL or credentials, no S3 keys or endpoint, no provider key. The engines are what
// `mediad doctor` reports (the same function), without loading the NSFW model, remembered for a
// while per process since it starts tools and asks the provider for its models.

const REPORT_TTL_MS = 5 * 60_000;

export interface SystemStatus {
  object: 'system';
  version: string;
  node: string;
  database: { backend: 'sqlite' | 'postgres' };
  storage: { backend: 'disk' } | { backend: 's3'; bucket: string };
  ffmpeg: DoctorReport['tools'];
  engines: Omit<DoctorReport, 'tools'> & { checked: string };
  queue: QueueCounts;
}

const reports = new WeakMap<Config, { at: number; report: Promise<DoctorReport & { checked: string }> }>();

/** The doctor's report, at most REPORT_TTL_MS old; concurrent callers share one check. */
function cachedReport(deps: Deps): Promise<DoctorReport & { checked: string }> {
  const now = deps.clock.now();
  const cached = reports.get(deps.config);
  if (cached && now.getTime() - cached.at < REPORT_TTL_MS) return cached.report;
  const report = doctor(deps.config, { loadNsfw: false }).then((r) => ({ ...r, checked: iso(now) }));
  reports.set(deps.config, { at: now.getTime(), report });
  // A failed check is not remembered.
  report.catch(() => reports.delete(deps.config));
  return report;
}

export async function systemStatus(deps: Deps, version: string): Promise<SystemStatus> {
  const { config } = deps;
  const [{ tools, ...engines }, queue] = await Promise.all([cachedReport(deps), queueTotals(deps)]);
  return {
    object: 'system',
    version,
    node: process.version,
    database: { backend: config.database.dialect },
    storage: config.storage.kind === 'disk' ? { backend: 'disk' } : { backend: 's3', bucket: config.storage.bucket },
    ffmpeg: tools,
    engines,
    queue,
  };
}
