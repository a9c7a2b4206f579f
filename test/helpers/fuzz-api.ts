import { TASK_KINDS } from '../../src/shapes/task-kinds.js';
import { EVENT_TYPES } from '../../src/events/record.js';
import { RawNumber, toJsonText, type FuzzJson, type Random } from './fuzz-random.js';

// What the fuzzer sends to the API: every route, with random methods, ids, query strings,
// headers and JSON bodies. Requests only ever name loopback URLs (see safeStrings).

export type Pool = 'file' | 'media' | 'task' | 'automation' | 'event' | 'webhook' | 'delivery' | 'orgProject' | 'path';
export const ID_PREFIX: Record<Exclude<Pool, 'path'>, string> = {
  file: 'file_',
  media: 'med_',
  task: 'task_',
  automation: 'auto_',
  event: 'evt_',
  webhook: 'we_',
  delivery: 'whd_',
  orgProject: 'prj_',
};

/** Project names the fuzzer makes, renames to and deletes: few, so deleted names are reused. */
const PROJECT_NAMES = ['p1', 'p2', 'p3', 'Reuse'];

export interface FuzzTarget {
  key: string;
  otherKey: string;
  projectId: string;
  /** The owner's web session (the organisation routes take a session, not a key), and their organisation. */
  session: { cookie: string; csrf: string; origin: string };
  orgId: string;
  /** Ids of the other key's project: named in bodies, they must be 404s, never another project's data. */
  foreign: { file: string[]; media: string[]; automation: string[]; task: string[] };
  /** Loopback URLs: the only URLs that ever appear in a request. */
  urls: string[];
  /** Real ids (and `folder/filename` delivery paths) seen so far. */
  pools: Record<Pool, string[]>;
}

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

type BodyTemplate = (r: Random, t: FuzzTarget) => { [k: string]: FuzzJson };

const pickUrl = (r: Random, t: FuzzTarget) => r.pick(t.urls);
const maybe = (r: Random, v: () => FuzzJson) => (r.chance(0.7) ? v() : r.jsonValue(2));
const idOf = (r: Random, t: FuzzTarget, pool: Pool) => {
  const foreign = t.foreign[pool as keyof FuzzTarget['foreign']];
  if (foreign?.length && r.chance(0.15)) return r.pick(foreign);
  return t.pools[pool].length > 0 && r.chance(0.7) ? r.pick(t.pools[pool]) : r.string();
};
const FORMATS = [
  'jpg',
  'jpeg',
  'png',
  'webp',
  'avif',
  'gif',
  'mp4',
  'webm',
  'mov',
  'mp3',
  'aac',
  'wav',
  'ogg',
  'xyz',
  '',
];

const step = (r: Random, t: FuzzTarget, depth: number): FuzzJson => {
  const s: { [k: string]: FuzzJson } = { kind: r.chance(0.9) ? r.pick(TASK_KINDS) : r.string() };
  if (r.chance(0.5)) s.width = r.number();
  if (r.chance(0.3)) s.format = r.pick(FORMATS);
  if (r.chance(0.2)) s.ref = r.string();
  if (r.chance(0.2)) s.url = pickUrl(r, t);
  if (r.chance(0.2))
    s.conditions = [
      {
        prop: r.pick(['kind', 'width', 'file.filesize', 'metadata.x', 'nope']),
        value: r.jsonValue(1),
        op: r.pick(['eq', 'gt', 'in', 'exists', 'bogus']),
      },
    ];
  if (depth > 0 && r.chance(0.4)) s.next = Array.from({ length: r.int(3) }, () => step(r, t, depth - 1));
  return s;
};

const BODIES: Record<string, BodyTemplate> = {
  file: (r, t) => ({
    url: pickUrl(r, t),
    media_id: maybe(r, () => idOf(r, t, 'media')),
    folder: maybe(r, () => r.string()),
    filename: maybe(r, () => r.pick(['a.png', 'b.jpg', r.string()])),
    ref: maybe(r, () => r.string()),
    metadata: maybe(r, () => r.jsonValue(3)),
  }),
  patchFile: (r) => ({
    folder: maybe(r, () => r.string()),
    filename: maybe(r, () => r.string()),
    ref: maybe(r, () => r.string()),
    metadata: maybe(r, () => r.jsonValue(3)),
  }),
  media: (r) => ({
    title: maybe(r, () => r.string()),
    alt: maybe(r, () => r.string()),
    metadata: maybe(r, () => r.jsonValue(3)),
  }),
  signature: (r) => ({
    filename: maybe(r, () => r.pick(['a.png', r.string()])),
    folder: maybe(r, () => r.string()),
    expiry: maybe(r, () => r.number()),
    method: maybe(r, () => r.pick(['get', 'put', 'GET', 'delete'])),
  }),
  task: (r, t) => ({
    kind: r.chance(0.9) ? r.pick(TASK_KINDS) : r.string(),
    url: maybe(r, () => pickUrl(r, t)),
    file_id: maybe(r, () => idOf(r, t, 'file')),
    filename: maybe(r, () => r.string()),
    folder: maybe(r, () => r.string()),
    ref: maybe(r, () => r.string()),
    webhook_url: maybe(r, () => pickUrl(r, t)),
    width: maybe(r, () => r.number()),
    height: maybe(r, () => r.number()),
    format: maybe(r, () => r.pick(FORMATS)),
    quality: maybe(r, () => r.number()),
    fit: maybe(r, () => r.pick(['cover', 'contain', 'fill', 'inside', 'bogus'])),
    start: maybe(r, () => r.number()),
    end: maybe(r, () => r.number()),
    count: maybe(r, () => r.number()),
    method: maybe(r, () => r.pick(['GET', 'POST', 'PUT', 'TRACE'])),
    headers: maybe(r, () => r.jsonValue(2)),
    body: maybe(r, () => r.jsonValue(3)),
    workflow: maybe(r, () => Array.from({ length: r.int(4) }, () => step(r, t, 3))),
  }),
  automation: (r, t) => ({
    name: maybe(r, () => r.string()),
    description: maybe(r, () => r.string()),
    status: maybe(r, () => r.pick(['active', 'paused', 'on'])),
    trigger: maybe(r, () => ({
      kind: r.pick(['event', 'schedule']),
      event: r.chance(0.8) ? r.pick(EVENT_TYPES) : r.string(),
      conditions: maybe(r, () => [{ prop: 'kind', value: r.jsonValue(1) }]),
    })),
    workflow: maybe(r, () => Array.from({ length: r.int(4) }, () => step(r, t, 3))),
  }),
  webhook: (r, t) => ({
    url: maybe(r, () => pickUrl(r, t)),
    events: maybe(r, () =>
      r.chance(0.3)
        ? ['*']
        : Array.from({ length: r.int(4) }, () => (r.chance(0.8) ? r.pick(EVENT_TYPES) : r.string())),
    ),
    description: maybe(r, () => r.string()),
    status: maybe(r, () => r.pick(['active', 'disabled', 'x'])),
  }),
  project: (r) => ({ require_signed_delivery: maybe(r, () => r.chance(0.5)) }),
  retry: (r, t) => ({
    kind: maybe(r, () => r.pick(TASK_KINDS)),
    media_id: maybe(r, () => idOf(r, t, 'media')),
    automation_id: maybe(r, () => idOf(r, t, 'automation')),
    status: maybe(r, () => r.pick(['failed', 'completed'])),
  }),
  projectName: (r) => ({ name: r.chance(0.85) ? r.pick(PROJECT_NAMES) : r.string() }),
  confirm: (r) => ({ confirm: r.chance(0.8) ? r.pick(PROJECT_NAMES) : r.string() }),
  empty: () => ({}),
};

interface RouteSpec {
  methods: string[];
  path: string;
  body?: keyof typeof BODIES;
  query?: 'list' | 'tasks' | 'events' | 'deliveries' | 'signed';
  /** Routes of people, not projects: sent with the owner's session (and CSRF token) instead of a key. */
  session?: true;
}

/** Every route of the API; {pool} segments are filled with real ids, unknown ids or garbage. */
export const ROUTES: RouteSpec[] = [
  { methods: ['GET', 'HEAD'], path: '/health' },
  { methods: ['GET'], path: '/metrics' },
  { methods: ['GET'], path: '/files', query: 'list' },
  { methods: ['POST'], path: '/files', body: 'file' },
  { methods: ['GET', 'DELETE'], path: '/files/{file}' },
  { methods: ['PATCH'], path: '/files/{file}', body: 'patchFile' },
  { methods: ['GET'], path: '/media', query: 'list' },
  { methods: ['POST'], path: '/media', body: 'media' },
  { methods: ['GET', 'DELETE'], path: '/media/{media}' },
  { methods: ['PATCH'], path: '/media/{media}', body: 'media' },
  { methods: ['POST'], path: '/signatures', body: 'signature' },
  { methods: ['GET'], path: '/tasks', query: 'tasks' },
  { methods: ['POST'], path: '/tasks', body: 'task' },
  { methods: ['GET'], path: '/tasks/{task}' },
  { methods: ['POST'], path: '/tasks/{task}/cancel', body: 'empty' },
  { methods: ['POST'], path: '/tasks/{task}/retry', body: 'empty' },
  { methods: ['POST'], path: '/tasks/retry', body: 'retry' },
  { methods: ['GET'], path: '/automations', query: 'list' },
  { methods: ['POST'], path: '/automations', body: 'automation' },
  { methods: ['GET', 'DELETE'], path: '/automations/{automation}' },
  { methods: ['PATCH', 'PUT'], path: '/automations/{automation}', body: 'automation' },
  { methods: ['GET'], path: '/events', query: 'events' },
  { methods: ['GET'], path: '/events/{event}' },
  { methods: ['GET'], path: '/webhooks', query: 'list' },
  { methods: ['POST'], path: '/webhooks', body: 'webhook' },
  { methods: ['GET', 'DELETE'], path: '/webhooks/{webhook}' },
  { methods: ['PATCH'], path: '/webhooks/{webhook}', body: 'webhook' },
  { methods: ['POST'], path: '/webhooks/{webhook}/rotate-secret', body: 'empty' },
  { methods: ['GET'], path: '/webhooks/{webhook}/deliveries', query: 'deliveries' },
  { methods: ['GET'], path: '/webhooks/{webhook}/deliveries/{delivery}' },
  { methods: ['POST'], path: '/webhooks/{webhook}/deliveries/{delivery}/retry', body: 'empty' },
  { methods: ['GET'], path: '/project' },
  { methods: ['PATCH'], path: '/project', body: 'project' },
  { methods: ['GET'], path: '/project/webhook-secret' },
  { methods: ['POST'], path: '/project/webhook-secret/rotate', body: 'empty' },
  { methods: ['GET', 'HEAD', 'PUT'], path: '/d/{project}/{path}', query: 'signed' },
  { methods: ['GET'], path: '/orgs/{org}/projects', session: true },
  { methods: ['POST'], path: '/orgs/{org}/projects', body: 'projectName', session: true },
  { methods: ['PATCH'], path: '/orgs/{org}/projects/{orgProject}', body: 'projectName', session: true },
  { methods: ['DELETE'], path: '/orgs/{org}/projects/{orgProject}', body: 'confirm', session: true },
];

const ODD_METHODS = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'PROPFIND',
  'FOO',
  'M-SEARCH',
  'LINK',
  'SEARCH',
];
const PAGE_VALUES = [
  '1',
  '2',
  '0',
  '-1',
  '1e20',
  'Infinity',
  '1e400',
  'NaN',
  'abc',
  '',
  '100',
  '101',
  '1000000000',
  '1000000001',
  '1.5',
  '0x10',
  '%00',
  '9007199254740993',
  '%E2%82%AC',
];
const QUERY_EXTRA: Record<string, () => string[]> = {
  tasks: () => ['status=pending', 'status=done', 'kind=image', 'kind=bogus', 'status='],
  events: () => ['type=media.created', 'type=nope', 'type=', ...EVENT_TYPES.map((e) => `type=${e}`)],
  deliveries: () => ['status=pending', 'status=failed', 'status=x'],
  signed: () => [
    'expiry=1',
    'expiry=99999999999',
    'expiry=abc',
    'method=put',
    'method=get',
    'method=x',
    'signature=abc',
    'signature=',
    'expiry=-1',
  ],
  list: () => [],
};

/** encodeURIComponent for any string: lone surrogates become U+FFFD instead of throwing. */
const enc = (s: string) => encodeURIComponent(Buffer.from(s, 'utf8').toString('utf8'));

function segment(r: Random, t: FuzzTarget, pool: string): string {
  if (pool === 'project') return r.chance(0.85) ? t.projectId : enc(r.string());
  if (pool === 'org') return r.chance(0.9) ? t.orgId : enc(r.string());
  if (pool === 'path') {
    if (t.pools.path.length > 0 && r.chance(0.6)) return r.pick(t.pools.path).split('/').map(enc).join('/');
    return [r.string(), r.pick(['a.png', 'x.mp4', r.string()])].map(enc).join('/');
  }
  const real = t.pools[pool as Pool];
  const x = r.next();
  if (x < 0.6 && real.length > 0) return r.pick(real);
  if (x < 0.75) return `${ID_PREFIX[pool as Exclude<Pool, 'path'>]}${'A'.repeat(16)}`;
  if (x < 0.8) return r.pick(['%ZZ', '%00', '..', '%2e%2e', '%2F', 'x'.repeat(70), 'x'.repeat(5000), '%C0%AF', '%FF']);
  return enc(r.string());
}

function queryString(r: Random, kind: RouteSpec['query']): string {
  const parts: string[] = [];
  if (kind && kind !== 'signed') {
    if (r.chance(0.6)) parts.push(`page=${r.pick(PAGE_VALUES)}`);
    if (r.chance(0.6)) parts.push(`limit=${r.pick(PAGE_VALUES)}`);
  }
  if (kind) for (const extra of QUERY_EXTRA[kind]!()) if (r.chance(0.15)) parts.push(extra);
  if (r.chance(0.1))
    parts.push(r.pick(['page=1&page=2', 'limit', '=x', '&&', 'a=%ZZ', `x=${enc(r.string())}`, '%00=%00']));
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

/** Removes anything that could name a host: the fuzzer must never make the server reach past loopback. */
export function safeStrings(v: FuzzJson, urls: string[]): FuzzJson {
  if (typeof v === 'string')
    return urls.includes(v) ? v : v.replace(/[:\uff1a\ufe13\ufe55\u2236\ua789\u02d0\u0589\u05c3]/g, '');
  if (Array.isArray(v)) return v.map((x) => safeStrings(x, urls));
  if (v !== null && typeof v === 'object' && !(v instanceof RawNumber)) {
    const o: { [k: string]: FuzzJson } = Object.create(null);
    for (const [k, x] of Object.entries(v)) o[k] = safeStrings(x, urls);
    return o;
  }
  return v;
}

function jsonBody(r: Random, t: FuzzTarget, template: BodyTemplate | undefined): Buffer | undefined {
  const x = r.next();
  const base = template ? template(r, t) : {};
  // Templates fill each field 7 times in 10; drop some so that optional fields go missing too.
  for (const k of Object.keys(base)) if (r.chance(0.3)) delete base[k];
  let value: FuzzJson;
  if (x < 0.55) value = base;
  else if (x < 0.65)
    value = Object.assign(
      base,
      r.object(1 + r.int(3), () => r.jsonValue(2)),
    );
  else if (x < 0.75) value = r.jsonValue(4);
  else if (x < 0.82)
    value = Object.assign(base, {
      [r.pick(['metadata', 'body', 'workflow', 'x'])]: r.nested(30 + r.int(100), r.jsonValue(1)),
    });
  else if (x < 0.85) return undefined;
  else return rawBody(r, toJsonText(safeStrings(base, t.urls)));
  return Buffer.from(toJsonText(safeStrings(value, t.urls)), 'utf8');
}

/** Bodies that are not quite JSON: cut short, wrong bytes, extra text, or over the size limit. */
function rawBody(r: Random, text: string): Buffer {
  const bad = [0xff, 0xfe, 0xc0, 0xed, 0xa0, 0x80, 0xe9];
  switch (r.int(9)) {
    case 0:
      return Buffer.from(text.slice(0, r.int(text.length + 1)));
    case 1: {
      const b = Buffer.from(text);
      const i = r.int(b.length + 1);
      return Buffer.concat([b.subarray(0, i), Buffer.from([r.pick(bad)]), b.subarray(i)]);
    }
    case 2:
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    case 3:
      return Buffer.from(`${text} trailing`);
    case 4:
      return Buffer.from(
        r.pick([
          'NaN',
          'Infinity',
          '-Infinity',
          'undefined',
          "{'a':1}",
          '{"a":1,}',
          '[1,]',
          '{"a" 1}',
          '"\\u12"',
          '{"a":"\\ud800"}',
          '{"title":"a","title":"b"}',
          'null',
          '0',
          '""',
          '[]',
        ]),
      );
    case 5:
      return Buffer.from(`{"metadata":{"n":${r.pick(['1e999', '-1E400', `1${'0'.repeat(400)}`, '1e-999', '-0'])}}}`);
    case 6:
      return Buffer.from(`{"metadata":{"s":"${'x'.repeat(1_100_000)}"}}`);
    case 7:
      return Buffer.from('['.repeat(1 + r.int(5000)) + ']'.repeat(r.int(5000)));
    default:
      return Buffer.from(`{"metadata":${'{"a":'.repeat(60 + r.int(10))}1${'}'.repeat(60 + r.int(10))}}`);
  }
}

const CONTENT_TYPES = [
  '',
  ' ',
  'text/plain',
  'application/json; charset=latin1',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json;',
  ';;;',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
  'application/jsonx',
  'application/*',
  '*/*',
  'image/png',
  'application/octet-stream',
  'application/json, text/plain',
  'application/json; charset="utf-8"',
];

function headers(r: Random, t: FuzzTarget, method: string, hasBody: boolean, session: boolean): Record<string, string> {
  const h: Record<string, string> = {};
  const a = r.next();
  if (session && a < 0.9) {
    h.cookie = t.session.cookie;
    if (method !== 'GET' && method !== 'HEAD' && r.chance(0.9)) {
      h['x-csrf-token'] = t.session.csrf;
      h.origin = r.chance(0.9) ? t.session.origin : 'https://elsewhere.example';
    }
  } else if (a < 0.8) h.authorization = `Bearer ${t.key}`;
  else if (a < 0.85) h.authorization = `Bearer ${t.otherKey}`;
  else if (a < 0.95)
    h.authorization = r.pick([
      'Bearer',
      'Bearer ',
      'Basic abc',
      `bearer ${t.key}`,
      `Bearer ${t.key}x`,
      `Bearer  ${t.key}`,
      `Bearer ${'k'.repeat(5000)}`,
      'Bearer mdk_',
    ]);
  if (r.chance(0.25))
    h['accept-version'] = r.pick([
      '2025-08-20',
      '2025-01-01',
      'bogus',
      ' ',
      '2025-08-20, 2025-01-01',
      '2099-01-01',
      '1',
      'x'.repeat(500),
    ]);
  if (method === 'POST' && r.chance(0.3))
    h['idempotency-key'] = r.pick([
      `fuzz-${r.int(20).toString().padStart(12, '0')}`,
      'short',
      'x'.repeat(33),
      'has space in it 0123',
      '\u00e9'.repeat(20),
      `k${r.int(1e9)}-abcdefghijklmnop`,
    ]);
  if (hasBody) h['content-type'] = r.chance(0.8) ? 'application/json' : r.pick(CONTENT_TYPES);
  else if (r.chance(0.05)) h['content-type'] = r.pick(CONTENT_TYPES);
  if (r.chance(0.05))
    h.range = r.pick([
      'bytes=0-0',
      'bytes=-1',
      'bytes=5-1',
      'bytes=99999999999999999999-',
      'items=0-1',
      'bytes=0-1,2-3',
    ]);
  if (r.chance(0.03)) h['if-none-match'] = r.pick(['*', '"x"', 'W/"y"']);
  if (r.chance(0.03)) h['x-forwarded-proto'] = 'https';
  if (r.chance(0.03)) h.accept = r.pick(['text/html', 'application/xml', '*/*;q=0']);
  return h;
}

/** One random request; the same Random state gives the same request. */
export function makeRequest(r: Random, t: FuzzTarget): FuzzRequest {
  const route = r.pick(ROUTES);
  let method = r.pick(route.methods);
  if (r.chance(0.1)) method = r.pick(ODD_METHODS);
  const path =
    route.path.replace(/\{(\w+)\}/g, (_, pool: string) => segment(r, t, pool)) +
    (r.chance(0.03) ? r.pick(['/', '//', '/extra']) : '') +
    queryString(r, route.query);
  let body: Buffer | undefined;
  if (route.path.startsWith('/d/') && method === 'PUT')
    body = r.chance(0.8) ? Buffer.from(Array.from({ length: r.int(64) }, () => r.int(256))) : undefined;
  else if (route.body || r.chance(0.05))
    body =
      method === 'GET' || method === 'HEAD' ? undefined : jsonBody(r, t, route.body ? BODIES[route.body] : undefined);
  return { method, path, headers: headers(r, t, method, body !== undefined, route.session === true), body };
}

/** One step of a scenario: given a way to send (answers held to every rule), it sends its requests in order. */
export type ScenarioStep = (send: (req: FuzzRequest) => Promise<any>) => Promise<void>;

const jsonRequest = (method: string, path: string, headers: Record<string, string>, body?: unknown): FuzzRequest => ({
  method,
  path,
  headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
  ...(body === undefined ? {} : { body: Buffer.from(JSON.stringify(body)) }),
});

/** The id of a created resource in either generation's answer. */
const idIn = (answer: any): string | undefined => answer?.data?.id ?? answer?.id;

/**
 * Sequences a random walk reaches too rarely, in both generations: an organisation project made,
 * deleted and its name taken again at once (by a new project and by a rename); failed tasks
 * retried in bulk; another project's ids named in bodies (retry filters, a task's file, a file's
 * media). Each answer is held to the same rules as the random requests.
 */
export function scenarioRequests(t: FuzzTarget): ScenarioStep[] {
  const steps: ScenarioStep[] = [];
  for (const version of ['2025-07-01', '2025-08-20']) {
    const session = {
      cookie: t.session.cookie,
      'x-csrf-token': t.session.csrf,
      origin: t.session.origin,
      'accept-version': version,
    };
    const key = { authorization: `Bearer ${t.key}`, 'accept-version': version };
    const projects = `/orgs/${t.orgId}/projects`;
    const name = `again-${version}`;
    steps.push(async (send) => {
      const first = idIn(await send(jsonRequest('POST', projects, session, { name })));
      if (first) await send(jsonRequest('DELETE', `${projects}/${first}`, session, { confirm: name }));
      const again = idIn(await send(jsonRequest('POST', projects, session, { name })));
      const spare = idIn(await send(jsonRequest('POST', projects, session, { name: `${name}-b` })));
      if (spare) await send(jsonRequest('DELETE', `${projects}/${spare}`, session, { confirm: `${name}-b` }));
      if (again) await send(jsonRequest('PATCH', `${projects}/${again}`, session, { name: `${name}-b` }));
      await send(jsonRequest('POST', projects, session, { name: `${name}-b` }));
    });
    steps.push(async (send) => {
      await send(jsonRequest('POST', '/tasks/retry', key, {}));
      await send(jsonRequest('POST', '/tasks/retry', key, { kind: 'http' }));
      for (const media of t.foreign.media) {
        await send(jsonRequest('POST', '/tasks/retry', key, { media_id: media }));
        await send(jsonRequest('POST', '/files', key, { url: t.urls[0], media_id: media }));
        await send(jsonRequest('GET', `/media/${media}`, key));
      }
      for (const automation of t.foreign.automation)
        await send(jsonRequest('POST', '/tasks/retry', key, { automation_id: automation }));
      for (const file of t.foreign.file)
        await send(jsonRequest('POST', '/tasks', key, { kind: 'image', file_id: file, width: 8 }));
      for (const task of t.foreign.task) await send(jsonRequest('POST', `/tasks/${task}/retry`, key, {}));
    });
  }
  return steps;
}
