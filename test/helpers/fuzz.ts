import fs from 'node:fs/promises';
import { request } from 'undici';
import { ERROR_CATALOGUE } from '../../src/errors.js';
import { isApiVersion, LATEST_VERSION } from '../../src/versions.js';
import { Contract } from './contract.js';
import { setUpOwner } from './people.js';
import { makeRequest, ID_PREFIX, scenarioRequests, type FuzzRequest, type FuzzTarget, type Pool } from './fuzz-api.js';
import { makeRandom, mixSeed } from './fuzz-random.js';
import { makeRawCase } from './fuzz-raw.js';
import { fixture } from './fixtures.js';
import { startOrigin, type Origin } from './origin.js';
import { rawExchange, type RawResponse } from './raw-http.js';
import { startReceiver } from './receiver.js';
import { startTestServer, type TestServer } from './server.js';

// A seeded fuzzer of the whole API over real HTTPS on loopback. Every answer must be below
// 500, match /openapi.json (the contract), and where it is JSON (every answer but delivered
// file bytes and /metrics) be in the generation the request asked for (Accept-Version, else the
// project's envelope default), with Mediad-Version saying so and a catalogue code whose status
// matches. Bodies name other projects' ids, organisation projects are made, deleted and their
// names reused, failed tasks retried in bulk. While it runs, /health is polled and must answer
// within HEALTH_LIMIT_MS each time (a request that holds the event loop shows there). Raw
// malformed HTTP goes over a TLS socket and over plain TCP, and must be answered with the
// envelope or, when the client stopped mid-request, with nothing.

/** The longest /health may take while the fuzzer runs (issue 20: a bulk retry held it for seconds). */
const HEALTH_LIMIT_MS = 1000;
const HEALTH_POLL_MS = 200;

export interface FuzzFailure {
  phase: 'api' | 'scenario' | 'raw' | 'health';
  index: number;
  reason: string;
  request: string;
  answer: string;
}

export interface FuzzResult {
  seed: number;
  requests: number;
  /** Requests the HTTP client refused to send (nothing reached the server). */
  skipped: number;
  rawCases: number;
  statuses: Record<string, number>;
  failures: FuzzFailure[];
  /** The slowest /health answer while the requests ran. */
  slowestHealthMs: number;
}

export interface FuzzEnv {
  t: TestServer;
  target: FuzzTarget;
  ca: string;
  close(): Promise<void>;
}

const POOL_CAP = 40;
const remember = (pool: string[], id: string) => {
  if (pool.includes(id)) return;
  pool.push(id);
  if (pool.length > POOL_CAP) pool.shift();
};

/** Starts mediad, a loopback origin and a webhook receiver, and makes a few real resources to aim at. */
export async function startFuzzEnv(): Promise<FuzzEnv> {
  const origin: Origin = await startOrigin();
  const receiver = await startReceiver();
  // Only these two loopback servers may be fetched; every other URL is refused before connecting.
  const t = await startTestServer({
    MEDIAD_SERVE_WORKERS: 'false',
    MEDIAD_ALLOWED_URL_HOSTS: `${origin.host},${receiver.host}`,
  });
  await fixture('image-png');
  const { key, project_id: projectId } = await t.key('fuzz', 'main');
  const { key: otherKey } = await t.key('fuzz', 'other');
  // The owner's session, for the organisation routes (projects made, renamed, deleted).
  const owner = await setUpOwner(t, 'fuzz-owner@example.com', 'Fuzz people');
  const target: FuzzTarget = {
    key,
    otherKey,
    projectId,
    urls: [
      origin.url('/fixtures/image-png'),
      origin.url('/status/404'),
      origin.url('/bytes/64'),
      receiver.url('/hook'),
      'http://127.0.0.1:1/closed',
      'https://[::1]:1/x',
    ],
    session: { ...owner.session, origin: t.base },
    orgId: owner.orgId,
    foreign: { file: [], media: [], automation: [], task: [] },
    pools: {
      file: [],
      media: [],
      task: [],
      automation: [],
      event: [],
      webhook: [],
      delivery: [],
      orgProject: [],
      path: [],
    },
  };
  // Resources of the other project, whose ids the fuzzer puts in bodies (media_id, file_id…).
  const other = async (path: string, body: unknown) => {
    const res = await t.call('POST', path, { key: otherKey, body });
    if (res.status !== 201) throw new Error(`fuzz setup: POST ${path} answered ${res.status} ${res.text}`);
    return res.json.data;
  };
  const theirs = await other('/files', { url: target.urls[0] });
  target.foreign.file.push(theirs.id);
  target.foreign.media.push(theirs.media_id);
  target.foreign.task.push((await other('/tasks', { kind: 'image', file_id: theirs.id, width: 8 })).id);
  target.foreign.automation.push(
    (
      await other('/automations', {
        trigger: { kind: 'event', event: 'file.created' },
        workflow: [{ kind: 'image', width: 8 }],
        status: 'paused',
      })
    ).id,
  );
  const post = async (path: string, body: unknown) => {
    const res = await t.call('POST', path, { key, body });
    if (res.status !== 201) throw new Error(`fuzz setup: POST ${path} answered ${res.status} ${res.text}`);
    return res.json.data;
  };
  await post('/webhooks', { url: receiver.url('/hook'), events: ['*'] });
  await post('/media', { title: 'fuzz' });
  for (const name of ['a.png', 'b.png']) await post('/files', { url: target.urls[0], folder: 'fz', filename: name });
  const file = (await t.call('GET', '/files', { key })).json.data[0];
  await post('/tasks', { kind: 'image', file_id: file.id, width: 16 });
  await post('/automations', {
    trigger: { kind: 'event', event: 'file.created' },
    workflow: [{ kind: 'image', width: 8 }],
    status: 'paused',
  });
  // Failed tasks for the bulk retries (no workers run here, so they are marked failed directly):
  // enough that one retry call would hold the event loop for seconds if it did not yield.
  const failing = await post('/tasks', { kind: 'http', url: receiver.url('/fails') });
  const db = t.server.runtime.deps.db;
  const error = JSON.stringify({ code: 'source_rejected', message: 'made to fail by the fuzz setup' });
  await db.updateTable('tasks').set({ status: 'failed', error }).where('id', '=', failing.id).execute();
  const row = await db.selectFrom('tasks').selectAll().where('id', '=', failing.id).executeTakeFirstOrThrow();
  for (let batch = 0; batch < 7; batch++)
    await db
      .insertInto('tasks')
      .values(
        Array.from({ length: 100 }, (_, i) => ({ ...row, id: `${row.id}f${batch}${String(i).padStart(2, '0')}` })),
      )
      .execute();
  // Events reach the webhook as deliveries within a few dispatcher rounds.
  for (let waited = 0; waited < 5_000 && target.pools.delivery.length === 0; waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
    await refreshPools(t, target);
  }
  return {
    t,
    target,
    ca: await fs.readFile(t.server.caCertPath!, 'utf8'),
    async close() {
      await t.stop();
      await origin.close();
      await receiver.close();
    },
  };
}

async function refreshPools(t: TestServer, target: FuzzTarget): Promise<void> {
  const list = async (path: string) =>
    ((await t.call('GET', `${path}?limit=100`, { key: target.key })).json?.data ?? []) as {
      id: string;
      folder?: string;
      filename?: string;
    }[];
  for (const [pool, path] of [
    ['file', '/files'],
    ['media', '/media'],
    ['task', '/tasks'],
    ['automation', '/automations'],
    ['event', '/events'],
    ['webhook', '/webhooks'],
  ] as const) {
    for (const item of await list(path)) {
      remember(target.pools[pool], item.id);
      if (item.folder !== undefined && item.filename !== undefined)
        remember(target.pools.path, `${item.folder}/${item.filename}`);
    }
  }
  for (const webhook of target.pools.webhook)
    for (const d of await list(`/webhooks/${webhook}/deliveries`)) remember(target.pools.delivery, d.id);
}

/** The version a request asks for: its known Accept-Version, else the project's default; null for an unknown one. */
function askedVersion(headers: Record<string, string>): string | null {
  const raw = headers['accept-version'];
  if (raw === undefined || raw === '') return '2025-07-01';
  const value = raw.trim();
  if (value === 'latest') return LATEST_VERSION;
  return isApiVersion(value) ? value : null;
}

/** Why an answer is wrong, or null. `asked`: the version the request asked for, when it named a known one. */
export function checkAnswer(
  method: string,
  path: string,
  status: number,
  headers: Record<string, string>,
  body: Buffer,
  asked: string | null = null,
): string | null {
  if (status >= 500) return `status ${status}`;
  const isFileBytes = path.startsWith('/d/') && method !== 'PUT' && [200, 206, 302, 304].includes(status);
  const isMetrics = path.startsWith('/metrics') && status === 200;
  if (method === 'HEAD' || isFileBytes || isMetrics || (status >= 100 && status < 200)) return null;
  if (!/^application\/json/.test(headers['content-type'] ?? ''))
    return `content-type ${headers['content-type'] ?? '(none)'} is not JSON`;
  let json: any;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return 'body is not JSON';
  }
  if (asked !== null && headers['mediad-version'] !== asked)
    return `asked for ${asked}, answered with Mediad-Version ${headers['mediad-version'] ?? '(none)'}`;
  // The bare generation (2025-08-20, named by the answer's Mediad-Version) answers without the
  // envelope: an object or array, or an error object {code, message, status}.
  const bare = headers['mediad-version'] === '2025-08-20';
  if (!json || typeof json !== 'object') return 'not a JSON object or array';
  const envelope = !!json.meta && typeof json.meta.request_id === 'string' && 'data' in json && !!json.links;
  if (bare && envelope) return 'an envelope answered in the bare generation';
  if (!bare && !envelope) return 'not the envelope';
  if (envelope && headers['mediad-version'] && json.meta.version !== headers['mediad-version'])
    return `meta.version ${json.meta.version} differs from Mediad-Version ${headers['mediad-version']}`;
  if (status >= 400) {
    const e = bare ? json : json.error;
    if (!e || typeof e.code !== 'string' || typeof e.message !== 'string' || !e.message)
      return 'error answer without error.code and message';
    if (!(e.code in ERROR_CATALOGUE)) return `error code ${e.code} is not in the catalogue`;
    if (ERROR_CATALOGUE[e.code as keyof typeof ERROR_CATALOGUE] !== status || e.status !== status)
      return `code ${e.code} answered with status ${status} (error.status ${e.status})`;
    if (envelope && (json.data !== null || json.meta.type !== 'error'))
      return 'error answer with data or a meta.type other than error';
    if (/\n\s+at |node_modules|\.ts:\d+/.test(e.message)) return 'error message carries a stack trace or source path';
    if (status === 405 && !headers.allow) return '405 without Allow';
    if (status === 401 && !headers['www-authenticate']) return '401 without WWW-Authenticate';
  } else if (envelope && json.error != null) return 'success answer with an error';
  return null;
}

const preview = (b: Buffer | undefined, n = 400) =>
  b === undefined
    ? ''
    : JSON.stringify(b.subarray(0, n).toString('utf8')) + (b.length > n ? `…(${b.length} bytes)` : '');

function describeRequest(req: FuzzRequest, target: FuzzTarget): string {
  const headers = Object.entries(req.headers).map(
    ([k, v]) => `${k}: ${v.replaceAll(target.key, '<key>').replaceAll(target.otherKey, '<other key>').slice(0, 200)}`,
  );
  return [`${req.method} ${req.path.slice(0, 500)}`, ...headers, req.body ? `body ${preview(req.body)}` : '']
    .filter(Boolean)
    .join('\n  ');
}

export interface FuzzOptions {
  seed: number;
  count: number;
  rawCount: number;
  /** Called with progress lines (every 500 requests, and each failure). */
  log?: (line: string) => void;
}

export async function runFuzz(env: FuzzEnv, opts: FuzzOptions): Promise<FuzzResult> {
  const { t, target } = env;
  const result: FuzzResult = {
    seed: opts.seed,
    requests: 0,
    skipped: 0,
    rawCases: 0,
    statuses: {},
    failures: [],
    slowestHealthMs: 0,
  };
  const fail = (f: FuzzFailure) => {
    result.failures.push(f);
    opts.log?.(`FAIL ${f.phase} #${f.index}: ${f.reason}\n  ${f.request}\n  -> ${f.answer}`);
  };
  const fetchDoc = async (q: string) =>
    (await (await request(`${t.base}/openapi.json${q}`, { dispatcher: t.agent })).body.json()) as Record<string, any>;
  const contract = new Contract({ envelope: await fetchDoc(''), bare: await fetchDoc('?generation=bare') });
  // /health, polled while the requests run.
  let running = true;
  const health = (async () => {
    for (let n = 0; running; n++) {
      const started = performance.now();
      const res = await request(`${t.base}/health`, { dispatcher: t.agent });
      await res.body.dump();
      const ms = performance.now() - started;
      result.slowestHealthMs = Math.max(result.slowestHealthMs, ms);
      if (ms > HEALTH_LIMIT_MS || res.statusCode !== 200)
        fail({
          phase: 'health',
          index: n,
          reason: `/health answered ${res.statusCode} in ${Math.round(ms)} ms (limit ${HEALTH_LIMIT_MS} ms)`,
          request: 'GET /health',
          answer: '',
        });
      await new Promise((r) => setTimeout(r, HEALTH_POLL_MS));
    }
  })();
  /** Sends one request and holds its answer to every rule; the parsed JSON body, when there is one. */
  const exchange = async (req: FuzzRequest, phase: 'api' | 'scenario', index: number): Promise<any> => {
    let status: number;
    const headers: Record<string, string> = {};
    let body: Buffer;
    try {
      const res = await request(`${t.base}${req.path}`, {
        method: req.method as 'GET',
        headers: req.headers,
        body: req.body,
        dispatcher: t.agent,
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
      status = res.statusCode;
      for (const [k, v] of Object.entries(res.headers))
        if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      body = Buffer.from(await res.body.arrayBuffer());
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      // undici refuses some requests itself (a method or header it will not send): nothing reached the server.
      if (code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_NOT_SUPPORTED') {
        result.skipped++;
        return undefined;
      }
      fail({
        phase,
        index,
        reason: `no answer: ${code} ${(err as Error).message}`,
        request: describeRequest(req, target),
        answer: '',
      });
      return undefined;
    }
    result.requests++;
    const bucket = `${Math.floor(status / 100)}xx`;
    result.statuses[bucket] = (result.statuses[bucket] ?? 0) + 1;
    const reason =
      checkAnswer(req.method, req.path, status, headers, body, askedVersion(req.headers)) ??
      contract.check(req.method, `${t.base}${req.path}`, status, headers, body.toString('utf8'))[0] ??
      null;
    if (reason)
      fail({ phase, index, reason, request: describeRequest(req, target), answer: `${status} ${preview(body)}` });
    if (status === 201) learn(target, body);
    try {
      return JSON.parse(body.toString('utf8'));
    } catch {
      return undefined;
    }
  };
  for (let i = 0; i < opts.count; i++) {
    await exchange(makeRequest(makeRandom(mixSeed(opts.seed, i)), target), 'api', i);
    if ((i + 1) % 500 === 0) opts.log?.(`${i + 1} requests, ${result.failures.length} failures`);
  }
  let step = 0;
  for (const request of scenarioRequests(target)) await request((req) => exchange(req, 'scenario', step++));
  running = false;
  await health;
  for (let i = 0; i < opts.rawCount; i++) {
    const r = makeRandom(mixSeed(opts.seed ^ 0x5bd1e995, i));
    const c = makeRawCase(r, target.key);
    const secure = i % 2 === 0;
    const ex = await rawExchange({
      port: Number(new URL(t.base).port),
      tls: secure ? { ca: env.ca } : null,
      data: c.data,
      halfClose: c.silentOk ? 'now' : 'when-answered',
      timeoutMs: 5_000,
      headAnswers: c.headAnswers,
    });
    result.rawCases++;
    const what = `${secure ? 'TLS' : 'TCP'} ${c.name}\n  ${JSON.stringify(c.data.subarray(0, 200).toString('latin1'))}${c.data.length > 200 ? `…(${c.data.length} bytes)` : ''}`;
    const answer =
      ex.responses.map((x: RawResponse) => `${x.status} ${JSON.stringify(x.raw.slice(0, 300))}`).join(' | ') +
      (ex.rest.length ? ` + ${JSON.stringify(ex.rest.subarray(0, 200).toString('latin1'))}` : '');
    if (ex.responses.length === 0 && ex.rest.length === 0 && !c.silentOk)
      fail({
        phase: 'raw',
        index: i,
        reason: `closed without an answer (${ex.closed ? 'closed' : 'timed out'}${ex.error ? `, ${ex.error}` : ''})`,
        request: what,
        answer,
      });
    if (ex.rest.length > 0)
      fail({ phase: 'raw', index: i, reason: 'bytes that are not an HTTP/1.1 answer', request: what, answer });
    ex.responses.forEach((x, n) => {
      const reason = checkAnswer(c.headAnswers[n] ? 'HEAD' : 'GET', '/', x.status, x.headers, x.body);
      if (reason) fail({ phase: 'raw', index: i, reason: `answer ${n + 1}: ${reason}`, request: what, answer });
    });
  }
  return result;
}

/** Adds the id of a created resource (and a file's delivery path) to the pools. */
function learn(target: FuzzTarget, body: Buffer): void {
  let data: { id?: unknown; folder?: unknown; filename?: unknown } | undefined;
  try {
    data = JSON.parse(body.toString('utf8')).data;
  } catch {
    return;
  }
  if (!data || typeof data.id !== 'string') return;
  const id = data.id;
  const pool = (Object.keys(ID_PREFIX) as Exclude<Pool, 'path'>[]).find((p) => id.startsWith(ID_PREFIX[p]));
  if (pool) remember(target.pools[pool], id);
  if (typeof data.folder === 'string' && typeof data.filename === 'string')
    remember(target.pools.path, `${data.folder}/${data.filename}`);
}
