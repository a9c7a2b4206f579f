import type { paths } from './api/schema';
import type { Body } from './api/types';

// Event types and the links an event's data names, shared by the Events and Webhooks pages.
// The lists are records over the API's own enums, so the compiler notices a type added or removed.

/** A type the event log filters by: one type (`task.failed`) or a resource's every type (`task.*`). */
export type EventFilter = NonNullable<NonNullable<paths['/events']['get']['parameters']['query']>['type']>;
/** What an endpoint subscribes to: `*` or one type. */
export type Subscription = Body<'/webhooks', 'post'>['events'][number];
export type EventType = Exclude<Subscription, '*'>;

const TYPES: Record<EventType, string> = {
  'media.created': 'A media was created',
  'media.updated': 'A media’s title, metadata or files changed',
  'media.deleted': 'A media was deleted',
  'file.created': 'A file was stored',
  'file.playable': 'A streaming package became playable while its task still runs',
  'file.deleted': 'A file was deleted',
  'task.created': 'A task was queued',
  'task.completed': 'A task completed',
  'task.failed': 'A task failed',
  'task.cancelled': 'A task was cancelled',
  'automation.created': 'An automation was created',
  'automation.updated': 'An automation was changed',
  'automation.deleted': 'An automation was deleted',
  'automation.skipped': 'An automation did not run (a loop or depth limit)',
};
const PREFIXES: Record<Exclude<EventFilter, EventType>, string> = {
  'media.*': 'Every media event',
  'file.*': 'Every file event',
  'task.*': 'Every task event',
  'automation.*': 'Every automation event',
};

const isEventType = (s: string): s is EventType => Object.hasOwn(TYPES, s);
const isPrefix = (s: string): s is Exclude<EventFilter, EventType> => Object.hasOwn(PREFIXES, s);
export const isEventFilter = (s: string | null): s is EventFilter => s !== null && (isEventType(s) || isPrefix(s));

export const EVENT_TYPES: EventType[] = Object.keys(TYPES).filter(isEventType);
export const EVENT_PREFIXES = Object.keys(PREFIXES).filter(isPrefix);
export const describeEventType = (t: string): string => (isEventType(t) ? TYPES[t] : isPrefix(t) ? PREFIXES[t] : t);

/** The kinds of object the app has a page for, by id prefix (src/ids.ts). */
const OBJECT = /^(med|file|task|auto|evt|we)_[A-Za-z0-9]{16,40}$/;

export interface ObjectLink {
  id: string;
  label: string;
  to: string;
}

/**
 * The app page of an object named by its id: media → its page; task → the tasks page with it open;
 * automation → its builder (dry run, run history); file → its media's page (when the media is known).
 */
export function objectPath(projectId: string, id: string, mediaId?: string): string | null {
  const base = `/p/${projectId}`;
  if (id.startsWith('med_')) return `${base}/media/${id}`;
  if (id.startsWith('task_')) return `${base}/tasks?task=${id}`;
  if (id.startsWith('auto_')) return `${base}/automations/${id}`;
  if (id.startsWith('evt_')) return `${base}/events?event=${id}`;
  if (id.startsWith('we_')) return `${base}/webhooks/${id}`;
  if (id.startsWith('file_') && mediaId) return `${base}/media/${mediaId}?file=${id}`;
  return null;
}

const LABELS: Record<string, string> = { med: 'media', file: 'file', task: 'task', auto: 'automation', we: 'webhook' };

/** The objects an event's data names (its own id, media_id, task ids in its input or output …), at most 8. */
export function linksOf(projectId: string, type: string, data: Record<string, unknown>): ObjectLink[] {
  const found = new Map<string, ObjectLink>();
  const mediaId = typeof data.media_id === 'string' ? data.media_id : type.startsWith('media.') ? data.id : undefined;
  const visit = (v: unknown, depth: number) => {
    if (found.size >= 8) return;
    if (typeof v === 'string') {
      if (!OBJECT.test(v) || found.has(v) || v.startsWith('evt_')) return;
      // A deleted object has no page left to open.
      if (v === data.id && type.endsWith('.deleted')) return;
      const to = objectPath(projectId, v, typeof mediaId === 'string' ? mediaId : undefined);
      if (to) found.set(v, { id: v, label: LABELS[v.slice(0, v.indexOf('_'))] ?? 'object', to });
    } else if (depth < 3 && Array.isArray(v)) v.forEach((x) => visit(x, depth + 1));
    else if (depth < 3 && typeof v === 'object' && v !== null) Object.values(v).forEach((x) => visit(x, depth + 1));
  };
  visit(data, 0);
  return [...found.values()];
}
