import type { Deps } from '../../deps.js';
import { sqliteFile } from '../../db/connect.js';
import { LogWriter } from '../../db/log-writer.js';
import { pruneRequestLog, type Retention } from '../../db/queries/request-log.js';
import { SegmentBuilder, type Actor } from '../../db/request-log-segments.js';
import { addUsage, pruneHourlyUsage, USAGE_METRICS, type UsageDelta } from '../../db/queries/usage.js';
import { countRequestLogDropped } from '../../metrics/registry.js';
import { Poller } from '../../poller.js';
import { signals } from '../../signals.js';
import type { AuthContext } from '../access.js';

// The request log and the usage figures counted where requests are answered (bytes delivered).
// Nothing is written on a request's path: a request stores a few primitives in a preallocated
// buffer (no URL parsing, no object, no date string), and a background loop (poller.ts) turns the
// buffer into segments, a row per project holding a line per request (db/request-log-segments.ts;
// redaction included), every FLUSH_MS or as soon as BATCH requests wait, and has them written,
// with the trims they make due, by the log writer (db/log-writer.ts: on a SQLite file a thread of
// its own): a row a flush, not a row a request, and no write on the thread that answers requests.
// The buffer is bounded: past MAX_BUFFERED requests (the database has fallen behind) they are
// dropped and counted in /metrics (mediad_request_log_dropped_total). stop() flushes what is left.
// Retention: MEDIAD_REQUEST_LOG_DAYS and _MAX_ROWS per project, whichever comes first, by whole
// segments and the one segment at the row limit cut to its newest requests; a project is trimmed
// once this process has added a twentieth of its row limit since the last time, and every
// project's old segments go every PRUNE_MS.

const FLUSH_MS = 250;
/** Requests buffered that call for a flush before FLUSH_MS is up. */
const BATCH = 512;
/** Requests per segment at most: a flush that holds more of one project's writes several. */
const SEGMENT_ROWS = 1024;
const MAX_BUFFERED = 20_000;
const PRUNE_MS = 10 * 60_000;
const DAY_MS = 86_400_000;
const FLUSH_SIGNAL = 'request-log';
const MAX_PATH = 2048;
export const REDACTED = 'REDACTED';

/** What the HTTP layer knows of an answered request. */
export interface AnsweredRequest {
  id: string;
  auth: AuthContext;
  method: string;
  route: string | null;
  /** The path and query as sent. */
  url: string;
  status: number;
  ms: number;
}

// Query parameters whose values are secrets: signed URLs' signatures, tokens, keys, passwords.
const SECRET_NAME = /(token|secret|signature|passw|sig$|^key$|api_?key|_key$|^auth|session|csrf|^code$|credential)/i;
// Values that are secrets whatever they are called: API keys, webhook secrets, bearer tokens.
const SECRET_VALUE = /^(mdk_|whsec_|bearer\s)/i;

/** The path as sent with the values of secret query parameters replaced by REDACTED. */
export function redactPath(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url.slice(0, MAX_PATH);
  const parts = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      const rawValue = eq < 0 ? '' : pair.slice(eq + 1);
      let name = rawName;
      let value = rawValue;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
        value = decodeURIComponent(rawValue.replace(/\+/g, ' '));
      } catch {
        // Malformed escapes: judged as sent.
      }
      return SECRET_NAME.test(name) || SECRET_VALUE.test(value) ? `${rawName}=${REDACTED}` : pair;
    });
  return `${url.slice(0, q)}?${parts.join('&')}`.slice(0, MAX_PATH);
}

/** Slots per buffered request: id, project, start (ms), method, route, url, status, ms, actor, key or user id. */
const STRIDE = 10;

export class Recorder {
  /**
   * Requests waiting to be written, STRIDE slots each; swapped with `spare` at each flush. They
   * grow as requests come (appending at the end) and keep their size: preallocated for
   * MAX_BUFFERED they held 3.2 MB of heap in every idle process.
   */
  private buf: unknown[] = [];
  private spare: unknown[] = [];
  private count = 0;
  private delivered = new Map<string, UsageDelta>();
  /** Requests this process added per project since it last trimmed that project. */
  private added = new Map<string, number>();
  private lastPrune = 0;
  private readonly poller: Poller;
  private readonly enabled: boolean;
  private readonly pruneEvery: number;
  private readonly writer: LogWriter;

  constructor(private readonly deps: Pick<Deps, 'db' | 'clock' | 'log' | 'config'>) {
    this.enabled = deps.config.requestLog.enabled;
    this.pruneEvery = Math.max(1, Math.ceil(deps.config.requestLog.maxRows / 20));
    this.writer = new LogWriter(deps.db, sqliteFile(deps.config.database));
    this.poller = new Poller({
      signal: FLUSH_SIGNAL,
      pollMs: FLUSH_MS,
      pass: () => this.flush(),
      onError: (err) => deps.log.warn({ err }, 'request log flush failed'),
    });
  }

  start(): void {
    this.poller.start();
  }

  /** Buffers one answered request: a few primitives into the buffer, nothing else (no I/O, no parsing). */
  record(r: AnsweredRequest): void {
    if (!this.enabled) return;
    if (this.count >= MAX_BUFFERED) {
      countRequestLogDropped(1);
      return;
    }
    const p = r.auth.principal;
    const b = this.buf;
    let i = this.count++ * STRIDE;
    b[i++] = r.id;
    b[i++] = r.auth.projectId;
    b[i++] = this.deps.clock.now().getTime() - r.ms;
    b[i++] = r.method;
    b[i++] = r.route;
    b[i++] = r.url;
    b[i++] = r.status;
    b[i++] = r.ms;
    b[i++] = p.type;
    b[i] = p.type === 'key' ? p.keyId : p.type === 'session' ? p.userId : null;
    if (this.count % BATCH === 0) signals.emit(FLUSH_SIGNAL);
  }

  /** Counts bytes sent by a delivery route (added to the usage counters at the next flush). */
  addDelivered(projectId: string, bytes: number): void {
    if (bytes <= 0) return;
    const hour = this.deps.clock.now().toISOString().slice(0, 13);
    const id = `${projectId} ${hour}`;
    const d = this.delivered.get(id);
    if (d) d.delta += bytes;
    else
      this.delivered.set(id, {
        projectId,
        at: `${hour}:00:00.000Z`,
        metric: USAGE_METRICS.bytesDelivered,
        delta: bytes,
      });
  }

  /** Writes what is buffered; prunes what is due. */
  async flush(): Promise<void> {
    const buf = this.buf;
    const n = this.count;
    const delivered = [...this.delivered.values()];
    this.delivered.clear();
    if (n > 0) {
      // Requests answered while this batch is written go to the other buffer.
      this.buf = this.spare;
      this.count = 0;
      try {
        const segments = toSegments(buf, n);
        await this.writer.write({
          segments: segments.map((s) => s.row()),
          trim: this.dueTrims(segments),
          retention: retention(this.deps, this.deps.clock.now()),
        });
      } catch (err) {
        countRequestLogDropped(n);
        this.deps.log.warn({ err, rows: n }, 'request log rows dropped: the insert failed');
      } finally {
        buf.fill(undefined, 0, n * STRIDE); // let the strings go
        this.spare = buf;
      }
    }
    if (delivered.length > 0) await addUsage(this.deps.db, delivered);
    await this.prune();
  }

  /** Counts the segments' rows per project; the projects that have reached pruneEvery. */
  private dueTrims(segments: readonly SegmentBuilder[]): string[] {
    const due: string[] = [];
    for (const s of segments) {
      const added = (this.added.get(s.projectId) ?? 0) + s.rows;
      if (added < this.pruneEvery) this.added.set(s.projectId, added);
      else {
        this.added.delete(s.projectId);
        if (!due.includes(s.projectId)) due.push(s.projectId);
      }
    }
    return due;
  }

  /** Every project's segments past MEDIAD_REQUEST_LOG_DAYS and old hourly usage, every PRUNE_MS. */
  private async prune(): Promise<void> {
    const now = this.deps.clock.now();
    if (now.getTime() - this.lastPrune >= PRUNE_MS) {
      this.lastPrune = now.getTime();
      await pruneRequestLog(this.deps.db, retention(this.deps, now).before);
      await pruneHourlyUsage(this.deps.db, now);
    }
  }

  /** Stops the loop and writes what is left. */
  async stop(): Promise<void> {
    await this.poller.stop();
    await this.flush();
    await this.writer.close();
  }
}

/** Buffered requests [0, n) as segments: one per project (more past SEGMENT_ROWS), redacted here. */
function toSegments(buf: readonly unknown[], n: number): SegmentBuilder[] {
  const open = new Map<string, SegmentBuilder>();
  const all: SegmentBuilder[] = [];
  for (let i = 0, end = n * STRIDE; i < end; i += STRIDE) {
    const projectId = buf[i + 1] as string;
    let s = open.get(projectId);
    if (!s || s.rows >= SEGMENT_ROWS) {
      s = new SegmentBuilder(projectId);
      open.set(projectId, s);
      all.push(s);
    }
    s.add(
      buf[i] as string, // id
      buf[i + 2] as number, // created (ms)
      buf[i + 3] as string, // method
      buf[i + 4] as string | null, // route
      redactPath(buf[i + 5] as string), // path
      buf[i + 6] as number, // status
      Math.round((buf[i + 7] as number) * 1000) / 1000, // duration_ms
      buf[i + 8] as Actor,
      buf[i + 9] as string | null, // key or user id
    );
  }
  return all;
}

/** What the requests older than MEDIAD_REQUEST_LOG_DAYS are, now. */
const retention = (deps: Pick<Deps, 'config'>, now: Date): Retention => ({
  maxRows: deps.config.requestLog.maxRows,
  before: new Date(now.getTime() - deps.config.requestLog.days * DAY_MS).toISOString(),
});
