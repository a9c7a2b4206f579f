// A renderer for the reader-thread tests, imported on the SQLite reader thread by its URL.
// Its text says where it ran, so a test can tell the thread's rendering from the fallback's.
import { isMainThread } from 'node:worker_threads';
import { renderer } from '../../src/db/renderer.js';

export interface CounterRow { project_id: string; count: number }

export function countersJson(label: string, rows: CounterRow[]): string {
  return JSON.stringify({ label, on: isMainThread ? 'main' : 'reader', rows: rows.map((r) => [r.project_id, r.count]) });
}
export const COUNTERS_JSON = renderer(import.meta.url, 'countersJson', countersJson);
export const MISSING_EXPORT = renderer<CounterRow, string>(import.meta.url, 'noSuchExport', countersJson);
