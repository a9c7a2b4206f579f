import Fastify, { LogController, type FastifyInstance, type FastifyServerFactory } from 'fastify';
import type { Deps } from './deps.js';
import { newId } from './ids.js';
import { registerAuth } from './http/auth.js';
import { registerErrorHandling, sendError, toAppError, trackMethods } from './http/errors.js';
import { registerIdempotency } from './http/idempotency.js';
import { createRateLimiter, createRateLimitStore } from './http/rate-limit.js';
import { observeRequest, UNMATCHED_ROUTE } from './metrics/http-requests.js';
import { lazyChildLogger } from './http/lazy-logger.js';
import { metricsRoutes } from './api/metrics.js';
import { validatorCompiler } from './http/validation.js';
import { lazySerializerCompiler } from './http/serializers.js';
import { requestedVersion } from './http/version.js';
import { registerRepresentation } from './http/representation.js';
import { jsonOnlyScope, registerJsonBodies } from './http/json-body.js';
import { clientErrorHandler } from './http/client-error.js';
import { BodyWatch } from './http/body-watch.js';
import { checkFraming } from './http/framing.js';
import './http/types.js';
import { deliveryRoutes } from './api/delivery.js';
import { filesRoutes } from './api/files.js';
import { healthRoutes } from './api/health.js';
import { mediaRoutes } from './api/media.js';
import { signatureRoutes } from './api/signatures.js';
import { tasksRoutes } from './api/tasks.js';
import { projectRoutes } from './api/project.js';
import { automationRoutes } from './api/automations.js';
import { eventsRoutes } from './api/events.js';
import { webhooksRoutes } from './api/webhooks.js';
import { keysRoutes } from './api/keys.js';
import { operationsRoutes } from './api/operations.js';
import { requestsRoutes } from './api/requests.js';
import { Recorder, redactPath } from './services/operations/recorder.js';
import { accountRoutes } from './api/accounts.js';
import { oidcRoutes } from './api/oidc.js';
import { adminRoutes } from './api/admin.js';
import { registerOpenApi } from './api/docs/openapi.js';
import { docsRoutes } from './api/docs/routes.js';
import { webAppRoutes } from './api/web-app.js';
import { imageUrlApiRoutes, imageUrlRoutes } from './api/image-urls.js';
// Resumable uploads (issue 25).
import { tusCors, tusOptionsRoutes, tusRoutes } from './api/uploads-tus.js';
import { uploadTokenRoutes } from './api/upload-tokens.js';
import { authenticateUploadToken } from './services/media/upload-tokens.js';

export interface AppOptions {
  serverFactory?: FastifyServerFactory;
  /** Where the built web application is (default: dist/web of this package). */
  webRoot?: string;
}

/** The Fastify application without a listener, so tests and the server share it. */
export async function buildApp(deps: Deps, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log,
    genReqId: () => newId('request'),
    childLoggerFactory: lazyChildLogger,
    // One access line per request is written in onResponse; Fastify's own pair is turned off.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    bodyLimit: deps.config.limits.bodyLimitBytes,
    trustProxy: deps.config.trustProxy.length > 0 ? deps.config.trustProxy : false,
    ...(opts.serverFactory ? { serverFactory: opts.serverFactory } : {}),
    // Errors raised before routing (a malformed percent-encoding in the URL) get the envelope too.
    frameworkErrors: (error, req, reply) => sendError(req, reply, toAppError(error)),
    // And so do requests Node's HTTP parser refuses before there is a request at all.
    clientErrorHandler: clientErrorHandler(deps.config.publicUrl),
  }) as unknown as FastifyInstance;

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(lazySerializerCompiler);
  registerJsonBodies(app, deps.config.limits.bodyLimitBytes);
  registerErrorHandling(app);
  registerRepresentation(app);
  const addMissingMethods = trackMethods(app);
  // The request log and bytes delivered, buffered and written in batches off the request path.
  const recorder = new Recorder(deps);
  recorder.start();
  app.addHook('onClose', async () => recorder.stop());

  const publicHost = new URL(deps.config.publicUrl).host;
  const accessLines = deps.log.isLevelEnabled('info'); // the level is set once, at start
  const bodies = new BodyWatch(deps.config.limits.bodyTimeoutMs, deps.config.publicUrl);
  app.addHook('onClose', async () => bodies.stop());
  // Callback hooks, not async ones: these run on every request, and an async hook costs a
  // promise and a microtask each (issue 26's profile).
  app.addHook('onRequest', (req, reply, done) => {
    try {
      reply.header('x-request-id', req.id);
      checkFraming(req.raw, publicHost);
      bodies.watch(req.raw);
      try {
        req.apiVersion = requestedVersion(req.headers);
      } catch (err) {
        // Health and file delivery are not versioned resources: an unknown version is not theirs
        // to refuse. Looked up only here, as req.routeOptions builds an object at every call.
        if (!req.routeOptions.config.unversioned) throw err;
      }
    } catch (err) {
      done(err as Error);
      return;
    }
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    // The route pattern (never the raw URL) labels metrics; the log line has both. Read once:
    // req.routeOptions builds an object at every call.
    const pattern = req.routeOptions.url;
    const route = pattern ?? UNMATCHED_ROUTE;
    observeRequest(req.method, route, reply.statusCode, reply.elapsedTime);
    // Requests that reached a project (a key, a session, a signed upload) go to its request log.
    if (req.auth)
      recorder.record({
        id: req.id,
        auth: req.auth,
        method: req.method,
        route: pattern ?? null,
        url: req.url,
        status: reply.statusCode,
        ms: reply.elapsedTime,
      });
    // Signatures, keys and tokens in the query are redacted here as in the request log; the
    // line's fields are built only when it is written (MEDIAD_LOG_LEVEL info or finer).
    if (accessLines)
      req.log.info(
        {
          method: req.method,
          route,
          url: redactPath(req.url),
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
        },
        'request',
      );
    done();
  });

  // Before the routes: it documents them as they are added.
  await registerOpenApi(app, deps);
  await app.register(docsRoutes, { deps });
  await app.register(webAppRoutes, { deps, ...(opts.webRoot ? { root: opts.webRoot } : {}) });
  await app.register(healthRoutes, { deps });
  await app.register(deliveryRoutes, { deps, recorder });
  // One rate-limit store for the API, the tus uploads and the image URLs' misses (shared by every
  // process on Redis or PostgreSQL).
  const rateStore = createRateLimitStore(deps);
  await app.register(imageUrlRoutes, { deps, rateStore });
  await app.register(metricsRoutes, { deps });
  // People (sign-in, their account and organisations) act on no project: outside its authentication.
  await app.register(async (people) => {
    jsonOnlyScope(people);
    await people.register(accountRoutes, { deps });
    await people.register(oidcRoutes, { deps });
    await people.register(adminRoutes, { deps });
  });
  // One limiter for the API and the tus uploads: a key or user has one count per minute across both.
  const rateLimiter = createRateLimiter(deps, rateStore);
  await app.register(async (api) => {
    registerAuth(api, deps, rateLimiter); // the limiter counts per key or user, after auth
    jsonOnlyScope(api);
    registerIdempotency(api, deps);
    await api.register(filesRoutes, { deps });
    await api.register(mediaRoutes, { deps });
    await api.register(signatureRoutes, { deps });
    await api.register(tasksRoutes, { deps });
    await api.register(projectRoutes, { deps });
    await api.register(automationRoutes, { deps });
    await api.register(eventsRoutes, { deps });
    await api.register(webhooksRoutes, { deps });
    await api.register(keysRoutes, { deps });
    await api.register(operationsRoutes, { deps });
    await api.register(requestsRoutes, { deps });
    await api.register(imageUrlApiRoutes, { deps });
    // Resumable uploads (issue 25): upload tokens.
    await api.register(uploadTokenRoutes, { deps });
  });
  // Resumable uploads (issue 25): tus bodies are raw bytes (not the API's JSON), and an upload
  // token (mdu_…) is a credential here only.
  await app.register(async (uploads) => {
    uploads.addHook('onRequest', tusCors);
    await uploads.register(tusOptionsRoutes, { deps }); // discovery and CORS preflights: no credential
    await uploads.register(async (authed) => {
      registerAuth(authed, deps, rateLimiter, (token) => authenticateUploadToken(deps, token));
      await authed.register(tusRoutes, { deps });
    });
  });
  addMissingMethods();
  return app;
}
