// The one client for outbound URL fetching (ingest, http tasks, webhooks). Each hop is
// vetted before dispatch (clear errors, IP literals) and again by the pinned connector
// at connect time (the socket uses exactly the vetted addresses).
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { lstat, open, rm, type FileHandle } from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Dispatcher } from 'undici';
import { AppError } from '../errors.js';
import type { UrlPolicy } from './address-policy.js';
import { toFetchError, type FetchSignals } from './fetch-errors.js';
import { displayUrl, parseFetchUrl, resolveAndCheck, systemLookup, type LookupFn } from './url-check.js';

export interface GuardedRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  signal?: AbortSignal;
}

export interface GuardedResponse {
  status: number;
  headers: Record<string, string>;
  /** Final URL after redirects. */
  url: string;
  /** undici body (a Node Readable). Stays under the client's idle and total deadlines. */
  body: Dispatcher.ResponseData['body'];
}

export interface DownloadOptions {
  signal?: AbortSignal;
  /** Called with the cumulative byte count after each chunk. */
  onProgress?(bytes: number): void;
}

export interface DownloadResult {
  size: number;
  contentType: string | null;
  finalUrl: string;
}

export interface GuardedClient {
  request(url: string, init?: GuardedRequestInit): Promise<GuardedResponse>;
  download(url: string, destPath: string, opts?: DownloadOptions): Promise<DownloadResult>;
  close(): Promise<void>;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// Headers that must not follow a redirect to another origin (as fetch does).
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
// Large buffers on fast links: fewer pause/resume cycles between socket, body and file.
const BODY_HIGH_WATER_MARK = 1024 * 1024;
const FILE_HIGH_WATER_MARK = 16 * 1024 * 1024;
// Regular files: start writeback (fdatasync in the background) after every this many bytes.
// One at a time per process, so slow disks never tie up more than one libuv pool thread with it.
const WRITEBACK_EVERY_BYTES = 64 * 1024 * 1024;
let writebacksInFlight = 0;

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** Reject as soon as `signal` aborts, so a hung DNS lookup still honours the deadline. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function nextHop(location: string, from: URL): URL {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw new AppError('source_unreachable', `${displayUrl(from)} redirected to an invalid URL`);
  }
  try {
    return parseFetchUrl(next.href);
  } catch (err) {
    const code = err instanceof AppError ? err.code : 'source_refused';
    throw new AppError(code, `${displayUrl(from)} redirected to a URL we refuse: ${(err as Error).message}`);
  }
}

export function createGuardedClient(policy: UrlPolicy, deps: { lookup?: LookupFn } = {}): GuardedClient {
  const lookup = deps.lookup ?? systemLookup;
  // Made by the first request (undici is loaded then: undici-agent.ts).
  let agent: Promise<Dispatcher> | undefined;
  const dispatcher = () => (agent ??= import('./undici-agent.js').then((m) => m.createAgent(policy, lookup)));

  function signalsFor(caller?: AbortSignal): FetchSignals {
    const deadline = AbortSignal.timeout(policy.totalTimeoutMs);
    return { deadline, caller, combined: caller ? AbortSignal.any([deadline, caller]) : deadline };
  }

  async function send(raw: string, init: GuardedRequestInit, sig: FetchSignals): Promise<GuardedResponse> {
    let url = parseFetchUrl(raw);
    let method = (init.method ?? 'GET').toUpperCase();
    let body = init.body;
    const headers: Record<string, string> = { 'user-agent': policy.userAgent };
    for (const [k, v] of Object.entries(init.headers ?? {})) headers[k.toLowerCase()] = v;

    for (let hop = 0; ; hop++) {
      let res: Dispatcher.ResponseData;
      try {
        await abortable(resolveAndCheck(url, policy, lookup), sig.combined);
        res = await (
          await dispatcher()
        ).request({
          origin: url.origin,
          path: url.pathname + url.search,
          method,
          headers,
          body,
          signal: sig.combined,
          highWaterMark: BODY_HIGH_WATER_MARK,
        });
      } catch (err) {
        throw toFetchError(err, url, sig, policy);
      }
      const location = res.headers.location;
      if (!REDIRECT_STATUSES.has(res.statusCode) || typeof location !== 'string') {
        return { status: res.statusCode, headers: flattenHeaders(res.headers), url: url.href, body: res.body };
      }
      res.body.dump().catch(() => {}); // drain or drop the redirect body; we never read it
      if (hop >= policy.maxRedirects) {
        const where = displayUrl(url);
        throw new AppError(
          'source_unreachable',
          `too many redirects: ${where} redirects again after ${policy.maxRedirects} hops`,
        );
      }
      const next = nextHop(location, url);
      // 303 always, and 301/302 after POST, become a bodyless GET, as browsers do.
      if (
        (res.statusCode === 303 && method !== 'HEAD') ||
        ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')
      ) {
        method = 'GET';
        body = undefined;
        for (const h of ['content-type', 'content-length', 'content-encoding']) delete headers[h];
      }
      if (next.origin !== url.origin) for (const h of CREDENTIAL_HEADERS) delete headers[h];
      url = next;
    }
  }

  async function download(raw: string, destPath: string, opts: DownloadOptions = {}): Promise<DownloadResult> {
    const sig = signalsFor(opts.signal);
    const res = await send(raw, {}, sig);
    const where = displayUrl(new URL(res.url));
    if (res.status < 200 || res.status > 299) {
      res.body.dump().catch(() => {});
      const text = STATUS_CODES[res.status];
      // A 4xx will not change on retry (except timeouts and rate limits); a 5xx may.
      const permanent = res.status >= 400 && res.status < 500 && ![408, 425, 429].includes(res.status);
      throw new AppError(
        permanent ? 'source_rejected' : 'source_unreachable',
        `the source answered ${res.status}${text ? ` ${text}` : ''} for ${where}`,
      );
    }
    const declared = Number(res.headers['content-length'] ?? NaN);
    if (declared > policy.maxBytes) {
      res.body.destroy();
      throw new AppError('source_too_large', `the source is ${declared} bytes, over the ${policy.maxBytes}-byte limit`);
    }

    // pipeline re-emits the first error on every stream, so remember which side failed first:
    // a disk error or a throwing onProgress is ours, not the source's, and surfaces as it is.
    let failedFirst: 'source' | 'local' | null = null;
    res.body.once('error', () => (failedFirst ??= 'source')); // before any await: never an unhandled 'error'
    let opened: FileHandle | undefined;
    let writeback = false;
    try {
      opened = await open(destPath, 'w');
      writeback = (await opened.stat()).isFile(); // not for a device such as /dev/null
    } catch (err) {
      await opened?.close().catch(() => {});
      res.body.destroy();
      throw err;
    }
    const fh = opened;

    // Count and cap from a 'data' observer rather than an extra stream stage: no per-chunk
    // promise hops, and a large file buffer lets fs coalesce chunks into few writev calls.
    // The observer and pipeline() are attached in the same tick, so no chunk flows unpiped.
    // Every WRITEBACK_EVERY_BYTES a regular file also gets an fdatasync in the background, so
    // the disk writes while the network still sends, and the fsync the blob store runs when the
    // download is done (storeLocalFile -> putFile) finds little left: for 1 GB on loopback that
    // fsync drops from ~0.35 s to ~0.02 s, and the download itself is not slower.
    let size = 0;
    let unsynced = 0;
    let syncing: Promise<void> | null = null;
    const { maxBytes } = policy;
    const { onProgress } = opts;
    const localFailure = (err: unknown) => {
      failedFirst ??= 'local';
      res.body.destroy(err as Error);
    };
    res.body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        res.body.destroy(new AppError('source_too_large', `the source sent more than the ${maxBytes}-byte limit`));
        return;
      }
      unsynced += chunk.length;
      if (writeback && syncing === null && writebacksInFlight === 0 && unsynced >= WRITEBACK_EVERY_BYTES) {
        unsynced = 0;
        writebacksInFlight++;
        // An fsync error is reported only once: it must fail this download, never be dropped.
        syncing = fh.datasync().then(
          () => {
            writebacksInFlight--;
            syncing = null;
          },
          (err: unknown) => {
            writebacksInFlight--;
            localFailure(err);
            throw err;
          },
        );
        syncing.catch(() => {}); // awaited below if the body is complete by then; else the body fails with it
      }
      try {
        onProgress?.(size);
      } catch (err) {
        localFailure(err);
      }
    });
    // The stream closes `fh` when done; FileHandle.close waits for a datasync in flight.
    const file = createWriteStream(destPath, { fd: fh, highWaterMark: FILE_HIGH_WATER_MARK });
    file.once('error', () => (failedFirst ??= 'local'));
    try {
      await pipeline(res.body, file);
      await syncing; // a datasync still in flight: its failure is this download's
    } catch (err) {
      if (!file.closed) await once(file, 'close').catch(() => {}); // never unlink before the fd is closed
      // Only unlink a regular file: destPath could be a device such as /dev/null.
      if ((await lstat(destPath).catch(() => null))?.isFile()) await rm(destPath, { force: true }).catch(() => {});
      throw failedFirst === 'local' ? err : toFetchError(err, new URL(res.url), sig, policy);
    }
    return { size, contentType: res.headers['content-type'] ?? null, finalUrl: res.url };
  }

  return {
    request: (url, init = {}) => send(url, init, signalsFor(init.signal)),
    download,
    close: async () => {
      if (agent) await (await agent).close();
    },
  };
}
