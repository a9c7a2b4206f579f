import type { operations } from '../../lib/api/schema';
import type { Data } from '../../lib/api/types';
import { isRecord } from '../../lib/guards';

// The tasks page's vocabulary: statuses and kinds the API filters by, which states allow
// which action, and the small formatters of a task's fields.

type ListQuery = NonNullable<operations['listTasks']['parameters']['query']>;

export type Status = NonNullable<ListQuery['status']>;

export type Kind = NonNullable<ListQuery['kind']>;

export type RetryResult = Data<'/tasks/retry', 'post'>;

export const STATUS_LABELS: Record<Status, string> = {
  pending: 'Pending',
  processing: 'Processing',
  waiting: 'Waiting',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

// Every kind the API filters by (a missing or extra one is a type error against schema.d.ts).
export const KIND_LABELS: Record<Kind, string> = {
  ingest: 'ingest',
  video: 'video',
  image: 'image',
  audio: 'audio',
  thumbnails: 'thumbnails',
  speech: 'speech',
  subtitles: 'subtitles',
  chapters: 'chapters',
  nsfw: 'nsfw',
  description: 'description',
  outline: 'outline',
  prompt: 'prompt',
  workflow: 'workflow',
  conditions: 'conditions',
  adaptive_video: 'adaptive video',
  http: 'http',
};

export const isStatus = (s: string | null): s is Status => s !== null && Object.hasOwn(STATUS_LABELS, s);

export const isKind = (s: string | null): s is Kind => s !== null && Object.hasOwn(KIND_LABELS, s);

export const STATUSES = Object.keys(STATUS_LABELS).filter(isStatus);

export const KINDS = Object.keys(KIND_LABELS).filter(isKind);

export const LIMIT = 25;

export const POLL_MS = 2000;

export const FINAL = new Set(['completed', 'failed', 'cancelled']);

export const CANCELLABLE = new Set(['pending', 'processing', 'waiting']);

export const RETRYABLE = new Set(['failed', 'cancelled']);

export function str(o: unknown, key: string): string | undefined {
  return isRecord(o) && typeof o[key] === 'string' ? o[key] : undefined;
}

/** A duration between two ISO times, short. */
export function formatDuration(from: string | undefined, to: string | undefined): string | null {
  if (!from || !to) return null;
  const ms = Date.parse(to) - Date.parse(from);
  if (!Number.isFinite(ms) || ms < 0) return null;
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}
