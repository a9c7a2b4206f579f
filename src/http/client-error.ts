import http from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { DEFAULT_VERSION, generationOf, type ApiVersion } from '../versions.js';
import { versionForError } from './version.js';

// Answers for what never becomes a request: an HTTP head Node's parser refuses (bad bytes in
// the target, a space in a header name, Content-Length beside Transfer-Encoding, a bad chunk
// size, a head over 16 KiB), a slow head, and CONNECT. Node and Fastify answer those with
// bodies of their own or not at all; here they get the error envelope like every other answer.

/** How long a refused connection is still read (and the bytes dropped) after the answer is sent. */
const LINGER_MS = 2_000;

/**
 * Sockets already answered here. Node's parser reports an error again for each later chunk of
 * the same connection (an oversized head spans several TLS records); a second report must not
 * destroy the socket before the first answer has gone out.
 */
const answered = new WeakSet<Duplex>();

/**
 * The error body for an answer written outside Fastify (no request object exists): the envelope,
 * or the bare error when the request's headers (when there are any) ask for the bare generation.
 */
export function rawErrorBody(
  selfUrl: string,
  err: AppError,
  requestId: string = newId('request'),
  headers: http.IncomingHttpHeaders = {},
): { version: ApiVersion; body: unknown } {
  const version = versionForError(headers) ?? DEFAULT_VERSION;
  const error = { code: err.code, message: err.message, status: err.status };
  if (generationOf(version) === 'bare') return { version, body: error };
  return {
    version,
    body: {
      meta: { request_id: requestId, org_id: null, project_id: null, version, type: 'error' as const },
      data: null,
      error,
      links: { self: selfUrl },
    },
  };
}

/** The AppError a parser error of Node's HTTP server stands for. */
export function clientErrorToAppError(err: NodeJS.ErrnoException): AppError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(
        'headers_too_large',
        'the request line and headers are larger than the 16 KiB this server accepts; send fewer or shorter headers',
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError(
        'request_timeout',
        'the request head or body did not arrive in time; send the whole request promptly',
      );
    default: {
      const reason =
        err.code?.startsWith('HPE_') && 'reason' in err && typeof err.reason === 'string' ? ` (${err.reason})` : '';
      return new AppError(
        'bad_request',
        `the request is not well-formed HTTP/1.1${reason}; check the request line, the header names and values, and the body framing`,
      );
    }
  }
}

/**
 * Writes `err` as a complete HTTP/1.1 answer straight to the socket and closes the connection.
 * The socket is read for a moment more, dropping the bytes: closing it with unread input makes
 * the kernel send a reset, which can destroy the answer before the client has read it (a
 * client still sending an oversized head otherwise saw the connection cut with no answer).
 */
export function answerOnSocket(
  socket: Duplex,
  selfUrl: string,
  err: AppError,
  headers: http.IncomingHttpHeaders = {},
): void {
  answered.add(socket);
  const requestId = newId('request');
  const answer = rawErrorBody(selfUrl, err, requestId, headers);
  const body = JSON.stringify(answer.body);
  const head = [
    `HTTP/1.1 ${err.status} ${http.STATUS_CODES[err.status] ?? 'Error'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    `mediad-version: ${answer.version}`,
    'connection: close',
  ].join('\r\n');
  socket.end(`${head}\r\n\r\n${body}`);
  socket.on('data', () => {});
  socket.resume();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/** What the HTTP server's current response on this socket has sent; Node keeps it on the socket. */
interface ServedSocket {
  _httpMessage?: { headersSent?: boolean } | null;
}

/**
 * The `clientError` listener for the HTTPS server (Fastify's clientErrorHandler option) and the
 * plain-HTTP server. Like Node's own default it answers only when nothing of another answer has
 * been written on the connection: a second head in the middle of a response would corrupt it.
 */
export function clientErrorHandler(publicUrl: string) {
  return (err: NodeJS.ErrnoException, socket: Duplex & ServedSocket): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
    const inFlight = socket._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    answerOnSocket(socket, publicUrl, clientErrorToAppError(err));
  };
}

/** CONNECT asks for a tunnel; mediad is not a proxy. Node would otherwise drop the connection silently. */
export function connectHandler(publicUrl: string) {
  return (_req: http.IncomingMessage, socket: Duplex): void => {
    answerOnSocket(
      socket,
      publicUrl,
      new AppError(
        'bad_request',
        'CONNECT is not supported: mediad is an API server, not a proxy; send GET, POST, PUT, PATCH or DELETE to an endpoint',
      ),
    );
  };
}

/** Answers a parsed request outside Fastify with `err` in the error shape of its generation, and closes. */
export function answerRaw(req: http.IncomingMessage, res: http.ServerResponse, selfUrl: string, err: AppError): void {
  const requestId = newId('request');
  const answer = rawErrorBody(selfUrl, err, requestId, req.headers);
  const body = JSON.stringify(answer.body);
  res.writeHead(err.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
    'mediad-version': answer.version,
    connection: 'close',
  });
  res.end(body);
}

/** An Expect header other than 100-continue: 417 in the error shape of the request's generation (Node's own is empty). */
export function expectationHandler(publicUrl: string) {
  return (req: http.IncomingMessage, res: http.ServerResponse): void =>
    answerRaw(
      req,
      res,
      `${publicUrl}${req.url ?? '/'}`,
      new AppError(
        'expectation_failed',
        `this server cannot meet "Expect: ${String(req.headers.expect)}"; send the request without it (or with Expect: 100-continue)`,
      ),
    );
}

/**
 * Listens on a server for what Node would otherwise answer itself or not at all: CONNECT, an
 * Expect header other than 100-continue (417), and with `withClientError` (servers Fastify does
 * not manage) malformed requests.
 */
export function answerMalformedRequests(server: http.Server, publicUrl: string, withClientError: boolean): void {
  if (withClientError) server.on('clientError', clientErrorHandler(publicUrl));
  server.on('connect', connectHandler(publicUrl));
  server.on('checkExpectation', expectationHandler(publicUrl));
}
