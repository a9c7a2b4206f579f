import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';

// The web application (web/, built by `npm run build:web` into dist/web) served under /app/.
// It is a client of the public API and nothing else: these routes only send its files.
// - /app/assets/<hashed name>: immutable for a year, the pre-compressed .br or .gz chosen by
//   Accept-Encoding (with Vary), never re-compressed per request;
// - /app/<file> at the top of dist/web (theme.js, favicon.svg): revalidated every time;
// - any other /app/… path: index.html (no-cache), so the app's own routes deep-link.
// HTML answers carry a strict Content-Security-Policy. `/` sends browsers to /app/.
//
// A small handler rather than @fastify/static: its current line (10.1) depends on
// content-disposition 3, which needs Node 22, and the SPA fallback, the CSP and the choice of
// pre-compressed files are a few lines here.

/**
 * script-src 'self' with no inline script (Vite emits none; the theme is set by /app/theme.js).
 * style-src allows 'unsafe-inline' because Radix's Dialog and menus lock page scroll with
 * react-remove-scroll, which inserts a <style> element at run time; styles cannot run code.
 */
export const WEB_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' blob: data:",
  "media-src 'self' blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.vtt': 'text/vtt; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
};

const ENCODINGS: ('br' | 'gzip')[] = ['br', 'gzip'];
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** dist/web of the package this file belongs to (src/api/ under tsx, dist/src/api/ when built). */
export function webRoot(): string {
  let dir = import.meta.dirname;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'dist', 'web');
    const up = path.dirname(dir);
    if (up === dir) return path.resolve('dist/web');
    dir = up;
  }
}

/** The encoding to send among the pre-compressed ones that exist: br, then gzip, else none. */
export function chooseEncoding(acceptEncoding: string | undefined, available: ('br' | 'gzip')[]): 'br' | 'gzip' | null {
  const accepted = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q ? Number(q.slice(2)) : 1;
    accepted.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const ok = (e: string) => (accepted.get(e) ?? accepted.get('*') ?? 0) > 0;
  for (const e of ENCODINGS) if (available.includes(e) && ok(e)) return e;
  return null;
}

function fileSize(file: string): number | null {
  try {
    const st = fs.statSync(file);
    return st.isFile() ? st.size : null;
  } catch {
    return null;
  }
}

function securityHeaders(reply: FastifyReply): void {
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('content-security-policy', WEB_CSP);
  reply.header('cross-origin-opener-policy', 'same-origin');
  reply.header('x-frame-options', 'DENY');
}

/** Sends a file of dist/web, pre-compressed when the client takes it. */
function sendFile(req: FastifyRequest, reply: FastifyReply, file: string, cacheControl: string): FastifyReply {
  const type = TYPES[path.extname(file)] ?? 'application/octet-stream';
  const available: ('br' | 'gzip')[] = [];
  if (fileSize(`${file}.br`) !== null) available.push('br');
  if (fileSize(`${file}.gz`) !== null) available.push('gzip');
  const encoding = chooseEncoding(req.headers['accept-encoding'], available);
  const sent = encoding === 'br' ? `${file}.br` : encoding === 'gzip' ? `${file}.gz` : file;
  const size = fileSize(sent);
  if (size === null) throw new AppError('not_found', `no such file of the web application: ${req.url}`);
  securityHeaders(reply);
  reply.header('cache-control', cacheControl);
  if (available.length > 0) reply.header('vary', 'Accept-Encoding');
  if (encoding) reply.header('content-encoding', encoding);
  reply.header('content-length', size);
  return reply.type(type).send(fs.createReadStream(sent));
}

export async function webAppRoutes(
  app: FastifyInstance,
  { deps, root = webRoot() }: { deps: Deps; root?: string },
): Promise<void> {
  const config = { unversioned: true };
  const schema = { hide: true };
  const notBuilt = () =>
    new AppError(
      'service_unavailable',
      `the web application is not built (no ${path.join(root, 'index.html')}): run npm run build (or npm run build:web)`,
    );

  // Browsers asking for the server's root get the app; API clients get the usual 404.
  app.get('/', { config, schema }, async (req, reply) => {
    if (/\btext\/html\b/.test(req.headers.accept ?? '')) return reply.redirect('/app/', 302);
    throw new AppError('not_found', `no route GET /; the API is described at ${deps.config.publicUrl}/openapi.json`);
  });
  app.get('/app', { config, schema }, async (_req, reply) => reply.redirect('/app/', 301));
  // Browsers ask every origin for /favicon.ico (the /docs page too): the app's icon, as SVG.
  app.get('/favicon.ico', { config, schema }, async (req, reply) =>
    sendFile(req, reply, path.join(root, 'favicon.svg'), 'public, max-age=86400'),
  );

  app.get<{ Params: { '*': string } }>('/app/*', { config, schema }, async (req, reply) => {
    const rest = req.params['*'];
    if (rest.startsWith('assets/')) {
      const name = rest.slice('assets/'.length);
      if (!SAFE_NAME.test(name) || /\.(br|gz)$/.test(name))
        throw new AppError('not_found', `no such file of the web application: ${req.url}`);
      if (fileSize(path.join(root, 'index.html')) === null) throw notBuilt();
      return sendFile(req, reply, path.join(root, 'assets', name), 'public, max-age=31536000, immutable');
    }
    // A file at the top of dist/web (not hashed: revalidated); index.html only as the fallback.
    if (SAFE_NAME.test(rest) && rest.includes('.') && !/\.(br|gz)$/.test(rest) && rest !== 'index.html') {
      const file = path.join(root, rest);
      if (fileSize(file) !== null) return sendFile(req, reply, file, 'no-cache');
    }
    const index = path.join(root, 'index.html');
    if (fileSize(index) === null) throw notBuilt();
    return sendFile(req, reply, index, 'no-cache');
  });
}
