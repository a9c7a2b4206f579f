import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../errors.js';
import { validationFailed, type AjvIssue } from './validation.js';
import { errorBody } from './envelope.js';
import { versionForError } from './version.js';
import { generationOf } from '../versions.js';
import { versionOf } from './representation.js';

/**
 * The version an error is answered in. Errors raised before routing (a malformed URL) come before
 * the hook that reads Accept-Version, and no other hook runs for them: read it here (an unknown
 * version is not this error's to refuse).
 */
function errorVersion(req: FastifyRequest) {
  req.apiVersion ??= versionForError(req.headers);
  return versionOf(req);
}

/** Maps everything thrown to the catalogue: framework errors by code, unknown errors to a 500 without internals. */
export function toAppError(err: FastifyError): AppError {
  if (isAppError(err)) return err;
  if (err.validation) return validationFailed(err.validation as AjvIssue[], err.validationContext);
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError(
        'invalid_json',
        'the request body is not valid JSON; send a JSON object with Content-Type: application/json',
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'the request body is larger than this endpoint accepts');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_EMPTY_TYPE':
      return new AppError(
        'unsupported_media_type',
        'send the request body as JSON with the header Content-Type: application/json',
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('bad_request', 'the Content-Length header does not match the body');
  }
  if (err.statusCode === 404) return new AppError('not_found', 'not found');
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return new AppError('bad_request', err.message);
  return new AppError('internal_error', 'an internal error occurred; it has been logged with this request id', {
    cause: err,
  });
}

/** An error in the request's generation: the envelope, or (bare) the error object itself. */
export function sendError(req: FastifyRequest, reply: FastifyReply, err: AppError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers ?? {})) reply.header(k, v);
  const version = errorVersion(req);
  const error = {
    code: err.code,
    message: err.message,
    status: err.status,
    ...(err.details ? { details: err.details } : {}),
  };
  // mediad answers HTTPS only; req.protocol is unset once a request stream was destroyed.
  reply.code(err.status).header('mediad-version', version).type('application/json; charset=utf-8');
  // Bare: the error object itself, which the route's response schema (an envelope) does not describe.
  if (generationOf(version) === 'bare') return reply.serializer(JSON.stringify).send(error);
  return reply.send(errorBody(req, `https://${req.host}${req.url}`, error));
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, req, reply) => {
    const appErr = toAppError(error);
    if (appErr.status >= 500) req.log.error({ err: error }, 'request failed');
    return sendError(req, reply, appErr);
  });
  app.setNotFoundHandler((req, reply) =>
    sendError(
      req,
      reply,
      new AppError(
        'not_found',
        `no endpoint ${req.method} ${req.url.split('?')[0]}; see the API reference in the README`,
      ),
    ),
  );
}

/**
 * Fastify answers 404 for a known path with an unsupported method; HTTP says 405 with Allow.
 * Routes are collected as they are added, then the missing methods are registered once.
 */
export function trackMethods(app: FastifyInstance): () => void {
  const byUrl = new Map<string, Set<string>>();
  const unversioned = new Set<string>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const set = byUrl.get(route.url) ?? new Set<string>();
    for (const m of methods) set.add(m);
    byUrl.set(route.url, set);
    if (route.config?.unversioned) unversioned.add(route.url);
  });
  return () => {
    const all = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
    for (const [url, methods] of [...byUrl]) {
      const allow = [...methods].filter((m) => m !== 'OPTIONS').join(', ');
      const missing = all.filter((m) => !methods.has(m));
      if (missing.length === 0) continue;
      app.route({
        method: missing,
        url,
        config: { unversioned: unversioned.has(url) },
        // Not an operation of the API: kept out of /openapi.json.
        schema: { hide: true },
        handler: (req, reply) => {
          reply.header('allow', allow);
          return sendError(
            req,
            reply,
            new AppError('method_not_allowed', `${req.method} is not allowed on ${url}; allowed: ${allow}`),
          );
        },
      });
    }
  };
}
