import os from 'node:os';
import path from 'node:path';
import { classifyAddress, type UrlPolicy } from './net/address-policy.js';
import { isAllowedHost } from './net/url-check.js';

// The only module that reads process.env. Everything is validated once, at start,
// and every problem is reported together so a user fixes them in one go.

export interface Config {
  dataDir: string;
  host: string;
  port: number;
  publicUrl: string;
  database: { dialect: 'sqlite'; file: string } | { dialect: 'postgres'; url: string; poolSize: number };
  tls: { certFile: string; keyFile: string } | null;
  trustProxy: string[];
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** JSON lines, human-readable lines, or auto: readable on a terminal, JSON into files and pipes. */
  logFormat: 'auto' | 'json' | 'pretty';
  /** The guarded client's policy; its size limit is limits.maxFileBytes. */
  fetch: Omit<UrlPolicy, 'maxBytes' | 'userAgent'>;
  limits: {
    maxFileBytes: number;
    maxPixels: number;
    maxDurationSeconds: number;
    /** Frames of an animated image (GIF, WebP), checked from the header. */
    maxFrames: number;
    bodyLimitBytes: number;
    /** Each such window of a request body must bring 1 KiB (or the rest of it), else 408. */
    bodyTimeoutMs: number;
  };
  delivery: { cacheControl: string; signedUrlTtlSeconds: number };
  ffmpegPath: string;
  ffprobePath: string;
  /** Nice value of media work (FFmpeg children, libvips' threads): the API's thread goes first on a busy machine. 0: unchanged. */
  processingNice: number;
  workers: {
    concurrency: number;
    leaseMs: number;
    pollMs: number;
    inServe: boolean;
    drainMs: number;
    metricsPort: number | null;
  };
  /** Where blobs live: the data dir's disk, or an S3-compatible bucket (credentials from the AWS SDK's usual chain). */
  storage:
    | { kind: 'disk' }
    | {
        kind: 's3';
        bucket: string;
        prefix: string;
        endpoint: string | null;
        region: string;
        forcePathStyle: boolean;
        delivery: 'stream' | 'redirect';
        presignSeconds: number;
      };
  /** Shared state for many processes (rate limits); null keeps it in the database or in memory. */
  redisUrl: string | null;
  /** Requests per minute per API key; 0 turns the limit off. */
  rateLimitPerMinute: number;
  /** Bearer token for GET /metrics; without one, /metrics answers loopback clients only. */
  metricsToken: string | null;
  /** The request log (services/operations/recorder.ts): on or off, and how long rows stay (whichever limit comes first). */
  requestLog: { enabled: boolean; days: number; maxRows: number };
  /** Limits that keep one project (or one automation loop) from taking every worker and the disk. */
  quotas: {
    /** Tasks a project may have pending; POST /tasks beyond it answers 429 too_many_tasks. 0: no limit. */
    pendingTasksPerProject: number;
    /** How many automations may follow one another (each firing on the previous one's output). */
    automationChainDepth: number;
    /**
     * Tasks that automations may start for the work one root event caused (a client's upload, a
     * task it made): each run's workflow task and its steps, at every depth of the chain.
     */
    automationChainTasks: number;
  };
  /** Resumable uploads (tus at /uploads/tus): an unfinished upload is removed this long after its creation. */
  uploads: { expiryMs: number };
  /** People and their sessions (the web application). */
  accounts: {
    /** A session ends after this long without a request... */
    sessionIdleMs: number;
    /** ...and this long after sign-in in any case. */
    sessionMaxMs: number;
    /** scrypt cost as log2(N); OWASP's minimum for scrypt is 17 (N = 131072, r = 8, p = 1). */
    passwordLogN: number;
    /** Sign-in attempts per minute, per account and per client address. */
    signInPerMinutePerAccount: number;
    signInPerMinutePerAddress: number;
    /** POST /auth/sign-in with an email and password (MEDIAD_PASSWORD_SIGN_IN); off when people sign in with OIDC only. */
    passwordSignIn: boolean;
  };
  /** Sign-in with an OpenID Connect provider; null when MEDIAD_OIDC_ISSUER is not set. */
  oidc: OidcConfig | null;
  /** Administration: invitations and the audit log. */
  admin: {
    /** How long an invitation link works. */
    invitationMs: number;
    /** Audit records older than this many days are pruned. */
    auditDays: number;
  };
  /** The OpenAI-compatible provider of the intelligence kinds; each part null when not configured. */
  ai: AiConfig;
  /**
   * Fault injection for the crash tests: the process SIGKILLs itself when it reaches this named
   * point (see src/faults.ts). Never set in production.
   */
  crashAt: string | null;
  /**
   * Keys that seal secret options (an http step's header values) at rest (MEDIAD_SECRET_KEY, then
   * MEDIAD_SECRET_KEY_PREVIOUS): 32 bytes each. Empty: the data dir's secret.key (made at first start).
   */
  secretKeys: Buffer[];
  // --- adaptive streaming (issue 23) ---
  /**
   * Access-Control-Allow-Origin of delivered files and packages (MEDIAD_DELIVERY_CORS_ORIGIN); null:
   * `*` for projects with public delivery, none for projects that require signed URLs.
   */
  deliveryCorsOrigin: string | null;
  /** On-the-fly image URLs (/img/…, docs/image-urls.md): the cache of results and the limits on making them. */
  imageUrls: {
    /** Bytes of cached results kept (least recently used go first past it). */
    cacheBytes: number;
    /**
     * A project's own budget within cacheBytes when its settings name none (its least recently
     * used results go first past it); at most cacheBytes, which is its default.
     */
    projectCacheBytes: number;
    maxWidth: number;
    maxHeight: number;
    /** Output pixels (width × height, after dpr). */
    maxPixels: number;
    /** Cache misses a project may cause per minute (per process); past it 429. 0: no limit. */
    missesPerMinute: number;
    /** Results computed at once (per process); more wait their turn. */
    concurrency: number;
  };
}

export interface AiEndpointConfig {
  /** Base URL with the API version path, e.g. http://127.0.0.1:8080/v1. */
  baseUrl: string;
  model: string;
}

export interface AiConfig {
  /** A vision-capable chat model (MEDIAD_AI_BASE_URL + MEDIAD_AI_CHAT_MODEL). */
  chat: AiEndpointConfig | null;
  /** A speech-to-text model (MEDIAD_AI_TRANSCRIBE_BASE_URL or MEDIAD_AI_BASE_URL + MEDIAD_AI_TRANSCRIBE_MODEL). */
  transcribe: AiEndpointConfig | null;
  /** Sent as a bearer token to both; never logged. */
  apiKey: string | null;
  /**
   * One provider request's time limit (MEDIAD_AI_TIMEOUT_SECONDS). Null when unset: 120 s for
   * chat, and for a transcription 120 s plus the length of the audio sent (a Whisper server on a
   * CPU may take about as long as the audio).
   */
  timeoutMs: number | null;
}

export interface OidcConfig {
  /** The issuer identifier; its /.well-known/openid-configuration is read at the first sign-in. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** What the sign-in page's button says: "Sign in with <name>". */
  name: string;
  /** Make a user for a verified email that has none (else only existing users sign in). */
  autoCreate: boolean;
  /** A user made at sign-in joins this organisation (an id or a name) with this role. */
  defaultOrg: string | null;
  defaultRole: 'viewer' | 'member' | 'admin';
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Reads and checks the environment; throws ConfigError listing every problem. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read = new EnvReader(env, problems);

  const dataDir = path.resolve(read.string('MEDIAD_DATA_DIR', './data'));
  const host = read.string('MEDIAD_HOST', '0.0.0.0');
  const port = read.int('MEDIAD_PORT', 8443, 0, 65535);
  const publicUrl = read.url('MEDIAD_PUBLIC_URL', `https://localhost:${port}`);
  const certFile = env.MEDIAD_TLS_CERT;
  const keyFile = env.MEDIAD_TLS_KEY;
  if (Boolean(certFile) !== Boolean(keyFile)) {
    problems.push(
      'MEDIAD_TLS_CERT and MEDIAD_TLS_KEY go together: set both (PEM file paths) or neither (a local certificate is created)',
    );
  }

  const imageCacheBytes = read.int('MEDIAD_IMAGE_URL_CACHE_BYTES', 1024 ** 3, 0, Number.MAX_SAFE_INTEGER);

  const config: Config = {
    dataDir,
    host,
    port,
    publicUrl,
    database: parseDatabaseUrl(
      env.MEDIAD_DATABASE_URL,
      dataDir,
      problems,
      read.int('MEDIAD_DATABASE_POOL_SIZE', 10, 1, 1000),
    ),
    tls: certFile && keyFile ? { certFile: path.resolve(certFile), keyFile: path.resolve(keyFile) } : null,
    trustProxy: read.list('MEDIAD_TRUST_PROXY'),
    logLevel: read.oneOf('MEDIAD_LOG_LEVEL', 'info', [
      'fatal',
      'error',
      'warn',
      'info',
      'debug',
      'trace',
      'silent',
    ] as const),
    logFormat: read.oneOf('MEDIAD_LOG_FORMAT', 'auto', ['auto', 'json', 'pretty'] as const),
    fetch: {
      allowPrivate: read.bool('MEDIAD_ALLOW_PRIVATE_URLS', false),
      allowHosts: read.list('MEDIAD_ALLOWED_URL_HOSTS'),
      maxRedirects: read.int('MEDIAD_FETCH_MAX_REDIRECTS', 5, 0, 20),
      connectTimeoutMs: read.int('MEDIAD_FETCH_CONNECT_TIMEOUT_SECONDS', 10, 1, 600) * 1000,
      idleTimeoutMs: read.int('MEDIAD_FETCH_IDLE_TIMEOUT_SECONDS', 30, 1, 3600) * 1000,
      totalTimeoutMs: read.int('MEDIAD_FETCH_TIMEOUT_SECONDS', 3600, 1, 86400) * 1000,
    },
    limits: {
      maxFileBytes: read.int('MEDIAD_MAX_FILE_BYTES', 4 * 1024 ** 3, 1, Number.MAX_SAFE_INTEGER),
      maxPixels: read.int('MEDIAD_MAX_PIXELS', 100_000_000, 1, Number.MAX_SAFE_INTEGER),
      maxDurationSeconds: read.int('MEDIAD_MAX_DURATION_SECONDS', 4 * 3600, 1, Number.MAX_SAFE_INTEGER),
      // Same default as src/media's DEFAULT_MAX_FRAMES (why 10,000: see there).
      maxFrames: read.int('MEDIAD_MAX_FRAMES', 10_000, 1, Number.MAX_SAFE_INTEGER),
      bodyLimitBytes: read.int('MEDIAD_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
      bodyTimeoutMs: read.int('MEDIAD_BODY_TIMEOUT_SECONDS', 30, 1, 3600) * 1000,
    },
    delivery: {
      cacheControl: read.string('MEDIAD_DELIVERY_CACHE_CONTROL', 'public, max-age=3600'),
      signedUrlTtlSeconds: read.int('MEDIAD_SIGNED_URL_TTL_SECONDS', 3600, 1, 7 * 86400),
    },
    ffmpegPath: read.string('MEDIAD_FFMPEG_PATH', 'ffmpeg'),
    ffprobePath: read.string('MEDIAD_FFPROBE_PATH', 'ffprobe'),
    processingNice: read.int('MEDIAD_PROCESSING_NICE', 10, 0, 19),
    workers: {
      concurrency: read.int('MEDIAD_WORKER_CONCURRENCY', os.availableParallelism(), 0, 256),
      leaseMs: read.int('MEDIAD_WORKER_LEASE_SECONDS', 30, 1, 3600) * 1000,
      pollMs: read.int('MEDIAD_WORKER_POLL_MS', 500, 10, 60_000),
      inServe: read.bool('MEDIAD_SERVE_WORKERS', true),
      drainMs: read.int('MEDIAD_WORKER_DRAIN_SECONDS', 30, 0, 3600) * 1000,
      metricsPort: read.int('MEDIAD_WORKER_METRICS_PORT', 0, 0, 65535) || null,
    },
    storage: parseStorage(env, read, problems),
    redisUrl: env.MEDIAD_REDIS_URL || null,
    rateLimitPerMinute: read.int('MEDIAD_RATE_LIMIT_PER_MINUTE', 1200, 0, 10_000_000),
    metricsToken: env.MEDIAD_METRICS_TOKEN || null,
    requestLog: {
      enabled: read.bool('MEDIAD_REQUEST_LOG', true),
      days: read.int('MEDIAD_REQUEST_LOG_DAYS', 7, 1, 3650),
      maxRows: read.int('MEDIAD_REQUEST_LOG_MAX_ROWS', 100_000, 1, 100_000_000),
    },
    quotas: {
      pendingTasksPerProject: read.int('MEDIAD_MAX_PENDING_TASKS', 1000, 0, 10_000_000),
      automationChainDepth: read.int('MEDIAD_AUTOMATION_MAX_DEPTH', 3, 1, 20),
      automationChainTasks: read.int('MEDIAD_AUTOMATION_CHAIN_TASKS', 50, 1, 1_000_000),
    },
    uploads: {
      expiryMs: Math.round(read.number('MEDIAD_UPLOAD_EXPIRY_HOURS', 24, 0.0001, 24 * 365) * 3600_000),
    },
    accounts: {
      sessionIdleMs: read.int('MEDIAD_SESSION_IDLE_HOURS', 7 * 24, 1, 24 * 365) * 3600_000,
      sessionMaxMs: read.int('MEDIAD_SESSION_MAX_DAYS', 30, 1, 365) * 86_400_000,
      passwordLogN: read.int('MEDIAD_PASSWORD_SCRYPT_LOG_N', 17, 14, 20),
      signInPerMinutePerAccount: read.int('MEDIAD_SIGN_IN_PER_MINUTE', 5, 1, 1000),
      signInPerMinutePerAddress: read.int('MEDIAD_SIGN_IN_PER_MINUTE_PER_ADDRESS', 20, 1, 10_000),
      passwordSignIn: read.bool('MEDIAD_PASSWORD_SIGN_IN', true),
    },
    oidc: parseOidc(env, read, problems),
    admin: {
      invitationMs: Math.round(read.number('MEDIAD_INVITATION_HOURS', 72, 0.0001, 24 * 365) * 3600_000),
      auditDays: read.int('MEDIAD_AUDIT_DAYS', 365, 1, 36_500),
    },
    ai: parseAi(env, read, problems),
    crashAt: env.MEDIAD_CRASH_AT || null,
    // adaptive streaming (issue 23)
    deliveryCorsOrigin: env.MEDIAD_DELIVERY_CORS_ORIGIN?.trim() || null,
    secretKeys: parseSecretKeys(env, problems),
    imageUrls: {
      cacheBytes: imageCacheBytes,
      projectCacheBytes: read.int('MEDIAD_IMAGE_URL_PROJECT_CACHE_BYTES', imageCacheBytes, 0, imageCacheBytes),
      maxWidth: read.int('MEDIAD_IMAGE_URL_MAX_WIDTH', 4096, 1, 16_384),
      maxHeight: read.int('MEDIAD_IMAGE_URL_MAX_HEIGHT', 4096, 1, 16_384),
      maxPixels: read.int('MEDIAD_IMAGE_URL_MAX_PIXELS', 16_777_216, 1, 268_435_456),
      missesPerMinute: read.int('MEDIAD_IMAGE_URL_MISSES_PER_MINUTE', 600, 0, 10_000_000),
      // One core left to the API: sharp already spreads one image over every core (its own
      // threads), so on 2 cores one computation at a time made as many images per second as two
      // while the API's p99 under 64 connections of misses went from 2.0x its idle p99 to 1.2x.
      concurrency: read.int('MEDIAD_IMAGE_URL_CONCURRENCY', Math.max(1, os.availableParallelism() - 1), 1, 256),
    },
  };
  problems.push(...privateProviderProblems(config));
  if (!config.accounts.passwordSignIn && !config.oidc)
    problems.push('MEDIAD_PASSWORD_SIGN_IN=false needs MEDIAD_OIDC_ISSUER: otherwise nobody can sign in');

  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** A 32-byte key written as base64 (44 characters) or hex (64), as `openssl rand -base64 32` prints one. */
function parseSecretKey(name: string, raw: string, problems: string[]): Buffer | null {
  const text = raw.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text)
    ? Buffer.from(text, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(text)
      ? Buffer.from(text, 'base64')
      : null;
  if (key?.length === 32) return key;
  problems.push(`${name} must be 32 random bytes as base64 or hex (make one with: openssl rand -base64 32)`);
  return null;
}

function parseSecretKeys(env: Env, problems: string[]): Buffer[] {
  const current = env.MEDIAD_SECRET_KEY;
  const previous = (env.MEDIAD_SECRET_KEY_PREVIOUS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!current) {
    if (previous.length > 0) problems.push('MEDIAD_SECRET_KEY_PREVIOUS needs MEDIAD_SECRET_KEY (the current key)');
    return [];
  }
  return [current, ...previous]
    .map((raw, i) => parseSecretKey(i === 0 ? 'MEDIAD_SECRET_KEY' : 'MEDIAD_SECRET_KEY_PREVIOUS', raw, problems))
    .filter((k): k is Buffer => k !== null);
}

function parseStorage(env: Env, read: EnvReader, problems: string[]): Config['storage'] {
  const raw = env.MEDIAD_STORAGE_URL;
  if (!raw || raw === 'disk' || raw.startsWith('file:')) return { kind: 'disk' };
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(raw);
  if (!m) {
    problems.push(
      `MEDIAD_STORAGE_URL must be s3://bucket/optional-prefix (or unset for the data dir's disk), got "${raw}"`,
    );
    return { kind: 'disk' };
  }
  const endpoint = env.MEDIAD_S3_ENDPOINT || null;
  if (endpoint && !/^https?:\/\//.test(endpoint))
    problems.push(`MEDIAD_S3_ENDPOINT must be an http(s) URL, got "${endpoint}"`);
  return {
    kind: 's3',
    bucket: m[1]!,
    prefix: (m[2] ?? '').replace(/^\/+|\/+$/g, ''),
    endpoint,
    region: read.string('MEDIAD_S3_REGION', 'us-east-1'),
    forcePathStyle: read.bool('MEDIAD_S3_FORCE_PATH_STYLE', endpoint !== null),
    delivery: read.oneOf('MEDIAD_S3_DELIVERY', 'stream', ['stream', 'redirect'] as const),
    presignSeconds: read.int('MEDIAD_S3_PRESIGN_SECONDS', 300, 1, 7 * 86400),
  };
}

function parseAi(env: Env, read: EnvReader, problems: string[]): AiConfig {
  const baseUrl = providerUrl('MEDIAD_AI_BASE_URL', env.MEDIAD_AI_BASE_URL, problems);
  const transcribeUrl = providerUrl('MEDIAD_AI_TRANSCRIBE_BASE_URL', env.MEDIAD_AI_TRANSCRIBE_BASE_URL, problems);
  const chatModel = env.MEDIAD_AI_CHAT_MODEL?.trim() || null;
  const transcribeModel = env.MEDIAD_AI_TRANSCRIBE_MODEL?.trim() || null;
  const apiKey = env.MEDIAD_AI_API_KEY?.trim() || null;
  const timeoutSeconds = read.int('MEDIAD_AI_TIMEOUT_SECONDS', 0, 1, 3600);
  if (chatModel && !baseUrl)
    problems.push('MEDIAD_AI_CHAT_MODEL needs MEDIAD_AI_BASE_URL (the provider, e.g. http://127.0.0.1:8080/v1)');
  if (transcribeModel && !baseUrl && !transcribeUrl)
    problems.push('MEDIAD_AI_TRANSCRIBE_MODEL needs MEDIAD_AI_TRANSCRIBE_BASE_URL or MEDIAD_AI_BASE_URL');
  if (baseUrl && !chatModel && !transcribeModel)
    problems.push(
      'MEDIAD_AI_BASE_URL is set but no model is: set MEDIAD_AI_CHAT_MODEL and/or MEDIAD_AI_TRANSCRIBE_MODEL',
    );
  if (transcribeUrl && !transcribeModel)
    problems.push('MEDIAD_AI_TRANSCRIBE_BASE_URL is set but MEDIAD_AI_TRANSCRIBE_MODEL is not');
  if (apiKey && !baseUrl && !transcribeUrl)
    problems.push('MEDIAD_AI_API_KEY is set but no provider is: set MEDIAD_AI_BASE_URL too');
  const transcribeBase = transcribeUrl ?? baseUrl;
  return {
    chat: baseUrl && chatModel ? { baseUrl, model: chatModel } : null,
    transcribe: transcribeBase && transcribeModel ? { baseUrl: transcribeBase, model: transcribeModel } : null,
    apiKey,
    timeoutMs: timeoutSeconds > 0 ? timeoutSeconds * 1000 : null,
  };
}

function parseOidc(env: Env, read: EnvReader, problems: string[]): OidcConfig | null {
  const raw = env.MEDIAD_OIDC_ISSUER?.trim();
  const clientId = env.MEDIAD_OIDC_CLIENT_ID?.trim() ?? '';
  const clientSecret = env.MEDIAD_OIDC_CLIENT_SECRET ?? '';
  const defaultOrg = env.MEDIAD_OIDC_DEFAULT_ORG?.trim() || null;
  const defaultRole = read.oneOf('MEDIAD_OIDC_DEFAULT_ROLE', 'viewer', ['viewer', 'member', 'admin'] as const);
  if (!raw) {
    for (const name of ['MEDIAD_OIDC_CLIENT_ID', 'MEDIAD_OIDC_CLIENT_SECRET', 'MEDIAD_OIDC_DEFAULT_ORG'])
      if (env[name]) problems.push(`${name} is set but MEDIAD_OIDC_ISSUER is not`);
    return null;
  }
  let issuer: URL | null = null;
  try {
    issuer = new URL(raw);
  } catch {
    problems.push(
      `MEDIAD_OIDC_ISSUER must be the provider's issuer URL, e.g. https://accounts.example.com, got "${raw}"`,
    );
  }
  if (issuer) {
    const host = issuer.hostname.replace(/^\[|\]$/g, '');
    const loopback = host === 'localhost' || classifyAddress(host) === 'loopback';
    // Plain HTTP only to this machine (a provider beside mediad, the tests): elsewhere tokens would cross the network in clear.
    if (issuer.protocol !== 'https:' && !(issuer.protocol === 'http:' && loopback))
      problems.push(`MEDIAD_OIDC_ISSUER must be an https:// URL (http:// only on a loopback address), got "${raw}"`);
    if (issuer.username || issuer.password || issuer.search || issuer.hash)
      problems.push('MEDIAD_OIDC_ISSUER must be a plain issuer URL (no credentials, query or fragment)');
  }
  if (!clientId) problems.push('MEDIAD_OIDC_ISSUER is set: set MEDIAD_OIDC_CLIENT_ID too');
  if (!clientSecret) problems.push('MEDIAD_OIDC_ISSUER is set: set MEDIAD_OIDC_CLIENT_SECRET too');
  if (env.MEDIAD_OIDC_DEFAULT_ROLE && !defaultOrg)
    problems.push('MEDIAD_OIDC_DEFAULT_ROLE needs MEDIAD_OIDC_DEFAULT_ORG (the organisation new users join)');
  return {
    issuer: raw,
    clientId,
    clientSecret,
    name: env.MEDIAD_OIDC_NAME?.trim() || 'single sign-on',
    autoCreate: read.bool('MEDIAD_OIDC_AUTO_CREATE', false),
    defaultOrg,
    defaultRole,
  };
}

/** An http(s) base URL without credentials, query or fragment (a key belongs in MEDIAD_AI_API_KEY). */
function providerUrl(name: string, raw: string | undefined, problems: string[]): string | null {
  if (!raw?.trim()) return null;
  try {
    const u = new URL(raw.trim());
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    if (u.username || u.password || u.search || u.hash) {
      problems.push(`${name} must be a plain base URL: put the key in MEDIAD_AI_API_KEY, not in the URL`);
      return null;
    }
    return u.toString().replace(/\/+$/, '');
  } catch {
    problems.push(`${name} must be an http(s) URL with the API version path, e.g. http://127.0.0.1:8080/v1`);
    return null;
  }
}

/**
 * A provider at a loopback or private address literal (a local Ollama, llama.cpp server) is
 * refused by the outbound guard unless allowed: say so at start, not at the first task.
 */
function privateProviderProblems(config: Config): string[] {
  if (config.fetch.allowPrivate) return [];
  const urls = new Set([config.ai.chat?.baseUrl, config.ai.transcribe?.baseUrl].filter((u) => u !== undefined));
  const out: string[] = [];
  for (const base of urls) {
    const url = new URL(base);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // A name other than localhost is resolved and checked when called.
    const cls = host === 'localhost' || host.endsWith('.localhost') ? 'loopback' : classifyAddress(host);
    if (cls !== 'public' && cls !== 'invalid' && !isAllowedHost(url, config.fetch.allowHosts))
      out.push(
        `the AI provider ${url.host} is a ${cls} address, which outbound calls refuse: add ${url.host} to MEDIAD_ALLOWED_URL_HOSTS`,
      );
  }
  return out;
}

function parseDatabaseUrl(
  raw: string | undefined,
  dataDir: string,
  problems: string[],
  poolSize: number,
): Config['database'] {
  if (!raw) return { dialect: 'sqlite', file: path.join(dataDir, 'mediad.db') };
  if (/^postgres(ql)?:\/\//.test(raw)) return { dialect: 'postgres', url: raw, poolSize };
  if (raw.startsWith('sqlite:')) {
    const file = raw.replace(/^sqlite:(\/\/)?/, '');
    if (file) return { dialect: 'sqlite', file: file === ':memory:' ? file : path.resolve(file) };
  }
  problems.push(`MEDIAD_DATABASE_URL must be sqlite:<path> or postgres://user@host/db, got "${raw}"`);
  return { dialect: 'sqlite', file: '' };
}

/** Small typed accessors that record problems instead of throwing at the first one. */
class EnvReader {
  constructor(
    private readonly env: Env,
    private readonly problems: string[],
  ) {}

  string(name: string, fallback: string): string {
    const v = this.env[name];
    return v === undefined || v === '' ? fallback : v;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const v = this.env[name];
    if (v === undefined || v === '') return fallback;
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      this.problems.push(`${name} must be a whole number from ${min} to ${max}, got "${v}"`);
      return fallback;
    }
    return n;
  }

  /** A number with a fraction allowed (e.g. hours: 0.5). */
  number(name: string, fallback: number, min: number, max: number): number {
    const v = this.env[name];
    if (v === undefined || v === '') return fallback;
    const n = Number(v);
    if (!/^\d+(\.\d+)?$/.test(v) || n < min || n > max) {
      this.problems.push(`${name} must be a number from ${min} to ${max}, got "${v}"`);
      return fallback;
    }
    return n;
  }

  bool(name: string, fallback: boolean): boolean {
    const v = this.env[name]?.toLowerCase();
    if (v === undefined || v === '') return fallback;
    if (['true', '1', 'yes', 'on'].includes(v)) return true;
    if (['false', '0', 'no', 'off'].includes(v)) return false;
    this.problems.push(`${name} must be true or false, got "${this.env[name]}"`);
    return fallback;
  }

  list(name: string): string[] {
    return (this.env[name] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  }

  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
    const v = this.env[name];
    if (v === undefined || v === '') return fallback;
    if ((allowed as readonly string[]).includes(v)) return v as T;
    this.problems.push(`${name} must be one of ${allowed.join(', ')}, got "${v}"`);
    return fallback;
  }

  url(name: string, fallback: string): string {
    const v = this.string(name, fallback);
    try {
      const u = new URL(v);
      if (u.protocol !== 'https:')
        this.problems.push(`${name} must be an https:// URL (mediad serves HTTPS only), got "${v}"`);
      return v.replace(/\/+$/, '');
    } catch {
      this.problems.push(`${name} must be an absolute URL such as https://media.example.com, got "${v}"`);
      return fallback;
    }
  }
}

/**
 * What the client commands (`mediad upload`) read: the API key of the snippets, MEDIAD_API_KEY.
 * Not part of the server's configuration (a server never needs a key of its own).
 */
export function clientSettings(env: Env = process.env): { apiKey: string | null } {
  return { apiKey: env.MEDIAD_API_KEY?.trim() || null };
}
