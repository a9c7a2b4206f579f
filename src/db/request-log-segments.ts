import type { Insertable } from 'kysely';
import type { RequestLogSegmentsTable } from './schema.js';

// The request log is stored in segments: one row holds a batch of one project's requests (those
// a flush wrote, services/operations/recorder.ts), a line each, so a busy API inserts a row a flush instead
// of a row a request, and retention deletes whole segments. Each segment carries what lets a read
// skip it without decoding: its ranges of ids and times, and its count per status class.
// The format is ours (no library encodes a few tab-separated fields faster than a template
// string): a line is id, created (milliseconds since 1970: a date string costs more to make than
// the rest of the line), method, route, path, status, duration_ms, actor and the key or user id,
// separated by tabs; a route or id left out is an empty field. A tab, a newline or a backslash in
// the path, the one field a client writes, is escaped (\t, \n, \\); ids, methods and route
// patterns never hold one.

export type Actor = 'key' | 'session' | 'signed_url';

/** One recorded request, as read back from a segment. */
export interface LoggedRequest {
  id: string;
  created: string;
  method: string;
  /** The route pattern (/files/:id); null when none matched. */
  route: string | null;
  /** The path and query as sent, with secret query values redacted. */
  path: string;
  status: number;
  duration_ms: number;
  actor: Actor;
  key_id: string | null;
  user_id: string | null;
}

/** The status classes a segment counts: 2xx to 5xx. */
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];
/** A segment's count column per status class. */
export const CLASS_COLUMNS = { '2xx': 'n2xx', '3xx': 'n3xx', '4xx': 'n4xx', '5xx': 'n5xx' } as const;

const NEEDS_ESCAPE = /[\t\n\\]/;
const escapeField = (s: string) =>
  NEEDS_ESCAPE.test(s) ? s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n') : s;
const unescapeField = (s: string) =>
  s.includes('\\') ? s.replace(/\\(.)/g, (_, c: string) => (c === 't' ? '\t' : c === 'n' ? '\n' : c)) : s;

/** One project's requests gathered into a segment, in the order they were written. */
export class SegmentBuilder {
  private readonly lines: string[] = [];
  private firstId = '';
  private lastId = '';
  private firstCreated = 0;
  private lastCreated = 0;
  private readonly classes = [0, 0, 0, 0];

  constructor(readonly projectId: string) {}

  get rows(): number {
    return this.lines.length;
  }

  add(
    id: string,
    createdMs: number,
    method: string,
    route: string | null,
    path: string,
    status: number,
    durationMs: number,
    actor: Actor,
    actorId: string | null,
  ): void {
    if (this.lines.length === 0) {
      this.firstId = this.lastId = id;
      this.firstCreated = this.lastCreated = createdMs;
    } else {
      if (id < this.firstId) this.firstId = id;
      else if (id > this.lastId) this.lastId = id;
      if (createdMs < this.firstCreated) this.firstCreated = createdMs;
      else if (createdMs > this.lastCreated) this.lastCreated = createdMs;
    }
    const c = Math.floor(status / 100) - 2;
    if (c >= 0 && c < 4) this.classes[c]!++;
    this.lines.push(
      `${id}\t${createdMs}\t${method}\t${route ?? ''}\t${escapeField(path)}\t${status}\t${durationMs}\t${actor}\t${actorId ?? ''}`,
    );
  }

  addRequest(r: LoggedRequest): void {
    this.add(
      r.id,
      Date.parse(r.created),
      r.method,
      r.route,
      r.path,
      r.status,
      r.duration_ms,
      r.actor,
      r.key_id ?? r.user_id,
    );
  }

  /** The segment as a row of request_log_segments. */
  row(): Insertable<RequestLogSegmentsTable> {
    const [n2xx, n3xx, n4xx, n5xx] = this.classes;
    return {
      project_id: this.projectId,
      first_id: this.firstId,
      last_id: this.lastId,
      first_created: new Date(this.firstCreated).toISOString(),
      last_created: new Date(this.lastCreated).toISOString(),
      rows: this.lines.length,
      n2xx: n2xx!,
      n3xx: n3xx!,
      n4xx: n4xx!,
      n5xx: n5xx!,
      body: this.lines.join('\n'),
    };
  }
}

/** A segment's lines, newest first. */
export const linesNewestFirst = (body: string): string[] => (body === '' ? [] : body.split('\n').reverse());

/** What a request must match to be listed (GET /requests' filters). */
export interface LineFilter {
  statusClass?: StatusClass;
  method?: string;
  keyId?: string;
  userId?: string;
  /** Created strictly after / before (ms since 1970). */
  afterMs?: number;
  beforeMs?: number;
}

/**
 * A test of a line against a filter that decodes nothing it need not: the key or user is the
 * line's end, the method a field of its own (no other field can hold a tab, so `\tPOST\t` is the
 * method), and only a status class or a time range splits the line, and only its first fields.
 */
export function lineMatcher(f: LineFilter): (line: string) => boolean {
  if (f.keyId && f.userId) return () => false; // a request is a key's or a session's
  const actor = f.keyId ? `\tkey\t${f.keyId}` : f.userId ? `\tsession\t${f.userId}` : null;
  const method = f.method ? `\t${f.method}\t` : null;
  const hundreds = f.statusClass === undefined ? undefined : Number(f.statusClass[0]);
  const fields = hundreds !== undefined || f.afterMs !== undefined || f.beforeMs !== undefined;
  return (line) => {
    if (actor && !line.endsWith(actor)) return false;
    if (method && !line.includes(method)) return false;
    if (!fields) return true;
    const [, created, , , , status] = line.split('\t', 6);
    if (hundreds !== undefined && Math.floor(Number(status) / 100) !== hundreds) return false;
    if (f.afterMs !== undefined && !(Number(created) > f.afterMs)) return false;
    if (f.beforeMs !== undefined && !(Number(created) < f.beforeMs)) return false;
    return true;
  };
}

export function decodeLine(line: string): LoggedRequest {
  const [id, created, method, route, path, status, duration, actor, actorId] = line.split('\t') as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    Actor,
    string,
  ];
  return {
    id,
    created: new Date(Number(created)).toISOString(),
    method,
    route: route === '' ? null : route,
    path: unescapeField(path),
    status: Number(status),
    duration_ms: Number(duration),
    actor,
    key_id: actor === 'key' && actorId !== '' ? actorId : null,
    user_id: actor === 'session' && actorId !== '' ? actorId : null,
  };
}

/** A segment's requests in the order they were written. */
export function decodeSegment(body: string): LoggedRequest[] {
  return body === '' ? [] : body.split('\n').map(decodeLine);
}

/** The request with this id in a segment's body, if it holds it: found by its line, only that line decoded. */
export function findInSegment(body: string, id: string): LoggedRequest | undefined {
  const field = `${id}\t`;
  for (let at = body.indexOf(field); at >= 0; at = body.indexOf(field, at + 1)) {
    if (at > 0 && body[at - 1] !== '\n') continue; // the id inside another line's path
    const end = body.indexOf('\n', at);
    const r = decodeLine(body.slice(at, end < 0 ? undefined : end));
    if (r.id === id) return r; // an id given with a tab in it matches no request
  }
  return undefined;
}

/** The segment cut to its newest `keep` requests (retention by rows cuts the oldest segment it keeps). */
export function keepNewest(projectId: string, body: string, keep: number): Insertable<RequestLogSegmentsTable> {
  const b = new SegmentBuilder(projectId);
  for (const r of decodeSegment(body).slice(-keep)) b.addRequest(r);
  return b.row();
}
