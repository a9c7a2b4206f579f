import { setImmediate } from 'node:timers/promises';
import { CompiledQuery, SqliteAdapter } from 'kysely';
import type { Deps } from '../deps.js';
import { AppendThread } from '../db/appender.js';
import { sqliteFile } from '../db/connect.js';
import { addUsage, pruneHourlyUsage, USAGE_METRICS, type UsageDelta } from '../db/queries/usage.js';
import { countRequestLogDropped } from '../metrics/registry.js';
import { Poller } from '../poller.js';
import { signals } from '../signals.js';
import type { AuthContext } from './access.js';

// The request log and the usage figures counted where requests are answered (bytes delivered).
// Nothing is written on a request's path: a request stores a few primitives in a preallocated
// buffer (no URL parsing, no object, no date string), and a background loop (poller.ts) turns the
// buffer into rows (redaction included) every FLUSH_MS, or as soon as BATCH rows wait, and has
// them inserted in prepared multi-row INSERTs, with the DELETEs that keep each project within its
// retention: on a SQLite file by a thread of its own (db/appender.ts), so the main thread does
// neither; on PostgreSQL by the pool. The buffer is bounded: past MAX_BUFFERED rows (the database
// has fallen behind) rows are dropped and counted in /metrics (mediad_request_log_dropped_total).
// stop() flushes what is left. Retention: MEDIAD_REQUEST_LOG_DAYS and _MAX_ROWS per project,
// whichever comes first, cut by ranges of the table's monotonic `seq`; a project is trimmed once
// this process has added a twentieth of its row limit since the last time, and every project's
// old rows go every PRUNE_MS.

const FLUSH_MS = 250;
/** Rows buffered that call for a flush before FLUSH_MS is up. */
const BATCH = 512;
/** Rows per INSERT statement (a power of two: a flush's remainder goes as smaller powers). */
const CHUNK = 64;
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
  /** Requests waiting to be written, STRIDE slots each; swapped with `spare` at each flush. */
  private buf: unknown[] = new Array<unknown>(MAX_BUFFERED * STRIDE);
  private spare: unknown[] = new Array<unknown>(MAX_BUFFERED * STRIDE);
  private count = 0;
  private delivered = new Map<string, UsageDelta>();
  /** Rows this process added per project since it last pruned that project. */
  private added = new Map<string, number>();
  private lastPrune = 0;
  private readonly poller: Poller;
  private readonly enabled: boolean;
  private readonly pruneEvery: number;
  private readonly insert: BatchInsert;
  private readonly writer: LogWriter;

  constructor(private readonly deps: Pick<Deps, 'db' | 'clock' | 'log' | 'config'>) {
    this.enabled = deps.config.requestLog.enabled;
    this.pruneEvery = Math.max(1, Math.ceil(deps.config.requestLog.maxRows / 20));
    this.insert = new BatchInsert(deps.db);
    this.writer = new LogWriter(deps.db, deps.config.database);
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
        // The batch's rows, then the trims they make due, in one transaction where a thread writes.
        await this.writer.run([...this.insert.statements(buf, n), ...this.dueTrims(buf, n)]);
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

  /** Counts the batch's rows per project; the trims of the projects that have reached pruneEvery. */
  private dueTrims(buf: readonly unknown[], n: number): CompiledQuery[] {
    const trims: CompiledQuery[] = [];
    const now = this.deps.clock.now();
    for (let i = 0; i < n; i++) {
      const projectId = buf[i * STRIDE + 1] as string;
      const added = (this.added.get(projectId) ?? 0) + 1;
      if (added < this.pruneEvery) this.added.set(projectId, added);
      else {
        this.added.delete(projectId);
        trims.push(...trimProject(this.deps, projectId, now));
      }
    }
    return trims;
  }

  /** Every project's rows past MEDIAD_REQUEST_LOG_DAYS and old hourly usage, every PRUNE_MS. */
  private async prune(): Promise<void> {
    const now = this.deps.clock.now();
    if (now.getTime() - this.lastPrune >= PRUNE_MS) {
      this.lastPrune = now.getTime();
      await pruneRequestLog(this.deps, now);
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

const COLUMNS = [
  'id',
  'project_id',
  'created',
  'method',
  'route',
  'path',
  'status',
  'duration_ms',
  'key_id',
  'user_id',
  'actor',
] as const;

/**
 * The buffer's rows as INSERTs of CHUNK rows, the remainder in statements of decreasing powers
 * of two. Each size's SQL text is built once, so each connection prepares it once; values are
 * bound, not compiled into the text, and nothing is serialised (JSON) or parsed on the way.
 */
class BatchInsert {
  private readonly texts = new Map<number, string>();
  private readonly sqlite: boolean;

  constructor(db: Deps['db']) {
    this.sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  }

  private text(rows: number): string {
    let text = this.texts.get(rows);
    if (text) return text;
    const tuples: string[] = [];
    for (let r = 0; r < rows; r++) {
      const at = r * COLUMNS.length;
      tuples.push(`(${COLUMNS.map((_, c) => (this.sqlite ? '?' : `$${at + c + 1}`)).join(',')})`);
    }
    text = `insert into request_log (${COLUMNS.join(', ')}) values ${tuples.join(',')}`;
    this.texts.set(rows, text);
    return text;
  }

  statements(buf: readonly unknown[], n: number): CompiledQuery[] {
    const out: CompiledQuery[] = [];
    for (let from = 0, size = CHUNK; from < n;) {
      if (n - from < size) {
        size /= 2;
        continue;
      }
      out.push(CompiledQuery.raw(this.text(size), rowValues(buf, from, size)));
      from += size;
    }
    return out;
  }
}

/**
 * Runs a flush's statements. On a SQLite file, the appender thread (db/appender.ts) runs them in
 * one transaction with its own connection, so the main thread neither inserts nor deletes; on
 * PostgreSQL, in memory or once that thread has failed, this connection runs them one by one,
 * each its own commit with a turn of the event loop between, so a flush never holds the thread long.
 */
class LogWriter {
  private readonly thread: AppendThread | null;

  constructor(
    private readonly db: Deps['db'],
    database: Deps['config']['database'],
  ) {
    const file = sqliteFile(database);
    this.thread = file ? new AppendThread(file) : null;
  }

  async run(statements: CompiledQuery[]): Promise<void> {
    if (this.thread?.usable) {
      try {
        return await this.thread.run(statements.map((q) => [q.sql, q.parameters]));
      } catch (err) {
        // A statement the database refused fails here too; a thread that died is not used again.
        if (this.thread.usable) throw err;
      }
    }
    for (const q of statements) {
      await this.db.executeQuery(q);
      await setImmediate();
    }
  }

  async close(): Promise<void> {
    await this.thread?.close();
  }
}

/** Buffered requests [from, from + rows) as the INSERT's values: the row each becomes, redacted here. */
function rowValues(buf: readonly unknown[], from: number, rows: number): unknown[] {
  const values = new Array<unknown>(rows * COLUMNS.length);
  let v = 0;
  for (let i = from * STRIDE, end = (from + rows) * STRIDE; i < end; i += STRIDE) {
    const actor = buf[i + 8];
    values[v++] = buf[i]; // id
    values[v++] = buf[i + 1]; // project_id
    values[v++] = new Date(buf[i + 2] as number).toISOString(); // created
    values[v++] = buf[i + 3]; // method
    values[v++] = buf[i + 4]; // route
    values[v++] = redactPath(buf[i + 5] as string); // path
    values[v++] = buf[i + 6]; // status
    values[v++] = Math.round((buf[i + 7] as number) * 1000) / 1000; // duration_ms
    values[v++] = actor === 'key' ? buf[i + 9] : null; // key_id
    values[v++] = actor === 'session' ? buf[i + 9] : null; // user_id
    values[v++] = actor;
  }
  return values;
}

const cutoff = (deps: Pick<Deps, 'config'>, now: Date) =>
  new Date(now.getTime() - deps.config.requestLog.days * DAY_MS).toISOString();

/**
 * Every project's rows older than MEDIAD_REQUEST_LOG_DAYS. Rows are written in about the order
 * they were made, so the walk up `seq` from the oldest row stops at the first young one: the
 * rows before it go (a straggler written late goes at the next prune).
 */
export async function pruneRequestLog(deps: Pick<Deps, 'db' | 'config'>, now: Date): Promise<void> {
  const before = cutoff(deps, now);
  const young = await deps.db
    .selectFrom('request_log')
    .select('seq')
    .where('created', '>=', before)
    .orderBy('seq')
    .limit(1)
    .executeTakeFirst();
  let q = deps.db.deleteFrom('request_log').where('created', '<', before);
  if (young) q = q.where('seq', '<', young.seq);
  await q.execute();
}

/**
 * The statements that trim one project's log: its rows older than MEDIAD_REQUEST_LOG_DAYS
 * before its first young one (on the (project_id, seq) index: the walk from the oldest row stops
 * at the first young one), then every row from the newest one past MEDIAD_REQUEST_LOG_MAX_ROWS
 * down. Each is one DELETE with its bound as a subquery, so they run where the inserts run, in
 * the same transaction, after them: the project always has a young row then.
 */
export function trimProject(deps: Pick<Deps, 'db' | 'config'>, projectId: string, now: Date): CompiledQuery[] {
  const { db } = deps;
  const before = cutoff(deps, now);
  const firstYoung = db
    .selectFrom('request_log')
    .select('seq')
    .where('project_id', '=', projectId)
    .where('created', '>=', before)
    .orderBy('seq')
    .limit(1);
  const newestPastLimit = db
    .selectFrom('request_log')
    .select('seq')
    .where('project_id', '=', projectId)
    .orderBy('seq', 'desc')
    .limit(1)
    .offset(deps.config.requestLog.maxRows);
  return [
    db
      .deleteFrom('request_log')
      .where('project_id', '=', projectId)
      .where('created', '<', before)
      .where('seq', '<', firstYoung)
      .compile(),
    db.deleteFrom('request_log').where('project_id', '=', projectId).where('seq', '<=', newestPastLimit).compile(),
  ];
}
