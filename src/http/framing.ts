import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors.js';

// Requests whose framing RFC 9112 calls ambiguous, or that this HTTP/1.1 server does not speak,
// are refused before anything reads them (in the error shape of the request's generation):
// - a request line naming another major version (HTTP/2.0 is negotiated by TLS, not written);
// - more than one Host line, or none in HTTP/1.1 (3.2): which host is meant is ambiguous;
// - a Transfer-Encoding other than chunked alone (6.1): Node decodes chunked framing only, so a
//   gzip coding would leave the body undecoded.

/** Throws for a request framed as above; an HTTP/1.0 request without Host is taken as addressed to `publicHost`. */
export function checkFraming(raw: IncomingMessage, publicHost: string): void {
  if (raw.httpVersionMajor !== 1)
    throw new AppError(
      'http_version_not_supported',
      `HTTP/${raw.httpVersion} is not spoken here: send HTTP/1.1 requests (over TLS)`,
    );
  let hosts = 0;
  const names = raw.rawHeaders;
  for (let i = 0; i < names.length; i += 2) if (names[i]!.length === 4 && names[i]!.toLowerCase() === 'host') hosts++;
  if (hosts > 1) throw new AppError('bad_request', 'the request has more than one Host header: send exactly one');
  if (hosts === 0) {
    // Links are built from Host. HTTP/1.0 may leave it out (the public host is meant);
    // HTTP/1.1 must send it. server.ts turns off Node's bodiless 400 for this.
    raw.headers.host = publicHost;
    if (raw.httpVersion !== '1.0')
      throw new AppError(
        'bad_request',
        'the request has no Host header; HTTP/1.1 requests must name the server in Host',
      );
  }
  const coding = raw.headers['transfer-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'chunked')
    throw new AppError(
      'bad_request',
      `Transfer-Encoding "${coding}" is not supported: send the body with Content-Length, or with Transfer-Encoding: chunked alone`,
    );
}
