import fs from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { metricsRoutes } from './api/metrics.js';
import { registerErrorHandling } from './http/errors.js';
import ipaddr from 'ipaddr.js';
import type { Config } from './config.js';
import { buildApp } from './app.js';
import { createLogger, createRuntime, type Runtime } from './runtime.js';
import { ensureLocalTls } from './tls/local-ca.js';
import { caFingerprint, trustSteps } from './tls/trust-steps.js';
import { answerFirstContact } from './tls/first-contact.js';
import { localTlsDir } from './tls/ca-file.js';
import type { Logger } from 'pino';
import { answerMalformedRequests, answerRaw, clientErrorHandler } from './http/client-error.js';
import { AppError } from './errors.js';
import { newId } from './ids.js';
import { newSetupToken } from './services/people/users.js';
import { WorkerPool } from './workers/pool.js';
import { WebhookDeliverer } from './webhooks/deliverer.js';
import { EventDispatcher } from './events/dispatcher.js';
import { Housekeeper } from './services/operations/purge.js';
import { automationConsumer } from './services/media/automation-runs.js';
import { endpointConsumer } from './webhooks/fanout.js';
import { TASK_READY, WEBHOOK_READY, type WorkSignal } from './signals.js';

export interface RunningServer {
  app: FastifyInstance;
  pool: WorkerPool | null;
  runtime: Runtime;
  /** The address actually bound, e.g. https://127.0.0.1:8443 (port resolved when 0 was asked). */
  url: string;
  /** While nobody has set mediad up: the one-time link that makes the first owner (also logged). */
  setupUrl: string | null;
  caCertPath: string | null;
  close(): Promise<void>;
}

/**
 * First run: with no user yet, a one-time setup link is logged (the token in the fragment, which
 * browsers never send to a server or put in a Referer). Each start makes one; any of them works
 * until someone has set mediad up. Once people exist, a missing API key is only a hint.
 */
async function announceSetup(runtime: Runtime, config: Config): Promise<string | null> {
  const { deps } = runtime;
  const token = await newSetupToken(deps);
  if (token) {
    const setupUrl = `${config.publicUrl}/app/setup#token=${token}`;
    deps.log.warn(
      {
        setupUrl,
        banner: 'setup',
        steps: [
          `  ${setupUrl}`,
          '',
          'Open it in a browser to create the first owner, organisation, project and API key',
          '(or run `mediad users create`). A browser that does not trust the local certificate',
          'authority yet shows a certificate error first: run `mediad tls trust` on this machine, or see',
          'the steps per browser in the README (Trusting the local certificate authority).',
        ],
      },
      'mediad is not set up yet: open the setup link',
    );
    return setupUrl;
  }
  const keys = await deps.db.selectFrom('api_keys').select('id').where('revoked', 'is', null).limit(1).execute();
  if (keys.length === 0)
    deps.log.warn(
      'no API keys yet: create one in the web application, or with `npm run mediad -- keys create --org <name> --project <name>`',
    );
  return null;
}

const TLS_HANDSHAKE = 0x16;
const FIRST_BYTE_TIMEOUT_MS = 15_000;

async function loadTls(config: Config, logger: Logger) {
  const log = (m: string) => logger.info(m);
  if (config.tls) {
    const [cert, key] = await Promise.all([
      fs.readFile(config.tls.certFile, 'utf8'),
      fs.readFile(config.tls.keyFile, 'utf8'),
    ]);
    return { cert, key, caCertPath: null, caCert: null };
  }
  const local = await ensureLocalTls({
    dir: localTlsDir(config.dataDir),
    hosts: [new URL(config.publicUrl).hostname],
    log,
  });
  if (local.created) {
    const fingerprint = caFingerprint(local.caCert);
    logger.warn(
      { banner: 'tls', caFile: local.caCertPath, steps: trustSteps(local.caCertPath, config.publicUrl, fingerprint) },
      'mediad made its own certificate authority: browsers and clients must trust it once',
    );
  }
  return local;
}

function isTrustedProxy(address: string | undefined, trusted: string[]): boolean {
  if (!address || trusted.length === 0) return false;
  try {
    const ip = ipaddr.process(address);
    return trusted.some((entry) => {
      if (!entry.includes('/')) return ipaddr.process(entry).toString() === ip.toString();
      const [range, bits] = ipaddr.parseCIDR(entry);
      return ip.kind() === range.kind() && ip.match([range, bits]);
    });
  } catch {
    return false;
  }
}

/** Plain HTTP on the HTTPS port: served only from a trusted TLS-terminating proxy, otherwise a readable error. */
function plainHttpHandler(
  config: Config,
  appHandler: http.RequestListener,
  caCert: string | null,
): http.RequestListener {
  // The local CA is made or renewed only at start: read once, offered to every first contact.
  const ca = caCert ? { pem: caCert, fingerprint: caFingerprint(caCert) } : null;
  return (req, res) => {
    if (req.headers['x-forwarded-proto'] === 'https' && isTrustedProxy(req.socket.remoteAddress, config.trustProxy))
      return appHandler(req, res);
    // A browser's first visit, or a client fetching the local CA to trust it.
    if (answerFirstContact(req, res, config.publicUrl, ca)) return;
    const target = `${config.publicUrl}${req.url ?? '/'}`;
    answerRaw(req, res, target, new AppError('https_required', `mediad only answers over HTTPS: use ${target}`));
  };
}

/**
 * One port speaks both: the first byte of a connection tells a TLS handshake (0x16)
 * from plain HTTP, which gets an https_required answer instead of a reset.
 */
function sniffProtocol(httpsServer: https.Server, plainServer: http.Server): void {
  const tlsListeners = httpsServer.listeners('connection') as ((s: Socket) => void)[];
  httpsServer.removeAllListeners('connection');
  httpsServer.on('connection', (socket: Socket) => {
    socket.setTimeout(FIRST_BYTE_TIMEOUT_MS, () => socket.destroy());
    socket.once('data', (chunk: Buffer) => {
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(chunk);
      // The TLS wrapper replays data already buffered on the socket; resuming would drain it first.
      if (chunk[0] === TLS_HANDSHAKE) for (const l of tlsListeners) l.call(httpsServer, socket);
      else {
        plainServer.emit('connection', socket);
        socket.resume();
      }
    });
  });
}

export async function startServer(config: Config): Promise<RunningServer> {
  const log = createLogger(config);
  const tls = await loadTls(config, log);
  const runtime = await createRuntime(config, log);
  let plainServer: http.Server | undefined;
  const app = await buildApp(runtime.deps, {
    serverFactory: (handler) => {
      // requireHostHeader: Node answers a missing Host itself, with an empty 400; buildApp
      // refuses it with the envelope instead.
      const httpsServer = https.createServer({ cert: tls.cert, key: tls.key, requireHostHeader: false }, handler);
      const plainHandler = plainHttpHandler(config, handler, tls.caCert);
      plainServer = http.createServer({ requireHostHeader: false }, plainHandler);
      // Fastify answers clientError on the HTTPS server (buildApp's clientErrorHandler); the
      // plain server, CONNECT and odd Expect headers are answered here.
      answerMalformedRequests(httpsServer, config.publicUrl, false);
      answerMalformedRequests(plainServer, config.publicUrl, true);
      sniffProtocol(httpsServer, plainServer);
      return httpsServer;
    },
  });
  try {
    await app.listen({
      host: config.host,
      port: config.port,
      listenTextResolver: (address) => `listening at ${address.replace(/^http:/, 'https:')}`,
    });
  } catch (err) {
    // A port in use must not leave the database and its timers open: a caller that handles the
    // error (a test, a supervisor retrying) would otherwise never exit.
    await app.close();
    await runtime.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host =
    config.host === '0.0.0.0' || config.host === '::'
      ? 'localhost'
      : config.host.includes(':')
        ? `[${config.host}]`
        : config.host;
  const url = `https://${host}:${port}`;
  log.info(
    { url, publicUrl: config.publicUrl, database: config.database.dialect, dataDir: config.dataDir },
    'mediad is listening',
  );
  const background = startBackground(runtime, config);
  const pool = background.pool;
  const setupUrl = await announceSetup(runtime, config);

  let closing: Promise<void> | undefined;
  return {
    app,
    pool,
    runtime,
    url,
    setupUrl,
    caCertPath: tls.caCertPath,
    close() {
      closing ??= (async () => {
        await app.close();
        await background.stop();
        plainServer?.closeAllConnections();
        await runtime.close();
      })();
      return closing;
    },
  };
}

/** Task workers, event dispatch and webhook delivery in this process. */
export interface Background {
  pool: WorkerPool | null;
  stop(): Promise<void>;
}

/** serve runs workers unless MEDIAD_SERVE_WORKERS=false; webhooks are always delivered. */
export function startBackground(runtime: Runtime, config: Config, workerRole = false): Background {
  const concurrency = workerRole ? Math.max(1, config.workers.concurrency) : config.workers.concurrency;
  const pool =
    concurrency > 0 && (workerRole || config.workers.inServe)
      ? new WorkerPool(runtime.deps, { ...config.workers, concurrency })
      : null;
  pool?.start();
  if (pool) runtime.deps.log.info({ concurrency, owner: pool.owner }, 'task workers started');
  const deliverer = new WebhookDeliverer(runtime.deps, { concurrency: 8, pollMs: 1000 });
  deliverer.start();
  // On PostgreSQL serve hears every event's NOTIFY and dispatches at once; worker processes woken
  // too raced it for the same rows (three dispatch transactions per event, most finding nothing),
  // so they dispatch on their poll only: what serve leaves, or all of it while serve is down.
  const wakeOnEvents = !(workerRole && config.database.dialect === 'postgres');
  const dispatcher = new EventDispatcher(runtime.deps, [automationConsumer, endpointConsumer], 250, wakeOnEvents);
  dispatcher.start();
  // Deleted projects wait a lease before their purge: a task or request that began before the deletion has ended.
  const housekeeper = new Housekeeper(runtime.deps, config.workers.leaseMs);
  housekeeper.start();
  return {
    pool,
    async stop() {
      await housekeeper.stop();
      await dispatcher.stop();
      await pool?.stop();
      await deliverer.stop();
    },
  };
}

/**
 * What wakes a `mediad worker` from other processes: new tasks and webhook deliveries. Its event
 * dispatch runs on its poll on PostgreSQL (startBackground), so the events' NOTIFY, sent by every
 * commit that records an event (each task's completion among them), would only wake it for nothing.
 */
const WORKER_WAKE_SIGNALS: readonly WorkSignal[] = [TASK_READY, WEBHOOK_READY];

/** `mediad worker`: workers only, sharing the data dir and database with serve. */
export async function startWorker(config: Config): Promise<{ pool: WorkerPool; close(): Promise<void> }> {
  const runtime = await createRuntime(config, undefined, WORKER_WAKE_SIGNALS);
  const background = startBackground(runtime, config, true);
  const metrics = await startWorkerMetrics(runtime, config).catch(async (err: unknown) => {
    await background.stop();
    await runtime.close();
    throw err;
  });
  return {
    pool: background.pool!,
    async close() {
      await metrics?.close();
      await background.stop();
      await runtime.close();
    },
  };
}

/**
 * A worker has no API, but its task series live in its own process: with
 * MEDIAD_WORKER_METRICS_PORT it serves GET /metrics (same token rules) over HTTPS.
 */
async function startWorkerMetrics(runtime: Runtime, config: Config): Promise<FastifyInstance | null> {
  if (!config.workers.metricsPort) return null;
  const tls = await loadTls(config, runtime.deps.log);
  const app = Fastify({
    https: { cert: tls.cert, key: tls.key },
    loggerInstance: runtime.deps.log,
    genReqId: () => newId('request'),
    clientErrorHandler: clientErrorHandler(config.publicUrl),
  }) as unknown as FastifyInstance;
  registerErrorHandling(app);
  await app.register(metricsRoutes, { deps: runtime.deps });
  await app
    .listen({
      host: config.host,
      port: config.workers.metricsPort,
      listenTextResolver: (a) => `metrics listening at ${a.replace(/^http:/, 'https:')}`,
    })
    .catch(async (err: unknown) => {
      await app.close();
      throw err;
    });
  return app;
}
