import fs from 'node:fs/promises';
import path from 'node:path';
import { MemoryLocker, Server } from '@tus/server';
import type { Locker, Upload } from '@tus/utils';
import type { Deps } from '../deps.js';
import { createAdvisoryLocker } from '../db/advisory-locker.js';
import { AppError, isAppError, type ErrorCode } from '../errors.js';
import { newId } from '../ids.js';
import type { AuthContext } from '../services/access.js';
import { scratchPath } from '../services/media/file-store.js';
import { createUploadRecord, deleteUploadRecord, finishUpload } from '../services/media/uploads.js';
import { createDiskUploadStore, type UploadStore } from '../storage/tus-store.js';
import type { UploadInput } from './tus-metadata.js';

// The tus server (@tus/server) as mediad uses it: uploads named upl_…, URLs on MEDIAD_PUBLIC_URL
// (the library would build http:// ones behind TLS), a lock that works across processes on
// PostgreSQL (advisory locks) and in memory on SQLite (one process owns the database file), and
// two hooks: creation records the upload for its project after checking its file fields; the last
// byte makes it a file. Each request carries its caller in a context kept beside the Web Request
// the route builds (uploads-tus.ts); an error of mediad's own is kept there, so the answer is
// the API's error envelope rather than tus's text.

export const TUS_PATH = '/uploads/tus';
export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = [
  'creation',
  'creation-with-upload',
  'creation-defer-length',
  'termination',
  'expiration',
  'checksum',
];
export const FILE_ID_HEADER = 'Mediad-File-Id';

export interface TusContext {
  auth: AuthContext;
  input?: UploadInput;
  /** An error of mediad's thrown in a hook: the route answers with it. */
  error?: unknown;
  fileId?: string;
  /** The upload whose last byte this request brought: its bytes go once the answer is made. */
  finished?: string;
}

export interface TusService {
  server: Server;
  store: UploadStore;
  contexts: WeakMap<Request, TusContext>;
  close(): Promise<void>;
}

/** Where the partial uploads live on disk. */
export const uploadsDir = (deps: Pick<Deps, 'config'>) => path.join(deps.config.dataDir, 'uploads');

export function createUploadStoreFor(deps: Pick<Deps, 'config'>): UploadStore {
  return createDiskUploadStore(uploadsDir(deps), deps.config.uploads.expiryMs);
}

/** tus's own error answers (status, text) as catalogue codes. */
const TUS_CODES: Record<number, ErrorCode> = {
  400: 'bad_request',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  410: 'upload_expired',
  412: 'precondition_failed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  460: 'checksum_mismatch',
  501: 'bad_request',
};

export function tusError(status: number, text: string): AppError {
  const code = TUS_CODES[status] ?? (status >= 500 ? 'service_unavailable' : 'bad_request');
  return new AppError(code, `tus: ${text.trim() || `status ${status}`}`, {
    headers: { 'tus-resumable': TUS_VERSION },
  });
}

export function createTusService(deps: Deps): TusService {
  const store = createUploadStoreFor(deps);
  const advisory = deps.config.database.dialect === 'postgres' ? createAdvisoryLocker(deps.config.database.url) : null;
  const locker: Locker = advisory ?? new MemoryLocker();
  const contexts = new WeakMap<Request, TusContext>();

  /** Runs a hook with the request's context; a failure is kept for the route and tus is told the status. */
  async function withContext<T>(req: Request, run: (ctx: TusContext) => Promise<T>): Promise<T> {
    const ctx = contexts.get(req);
    if (!ctx) throw { status_code: 500, body: 'no request context' };
    try {
      return await run(ctx);
    } catch (err) {
      ctx.error = err;
      throw { status_code: isAppError(err) ? err.status : 500, body: err instanceof Error ? err.message : 'failed' };
    }
  }

  const server = new Server({
    path: TUS_PATH,
    datastore: store.datastore,
    locker,
    maxSize: deps.config.limits.maxFileBytes,
    namingFunction: () => newId('upload'),
    generateUrl: (_req, { id }) => `${deps.config.publicUrl}${TUS_PATH}/${id}`,
    exposedHeaders: [FILE_ID_HEADER],
    // The sweeper removes expired uploads (services/media/uploads.ts), not a request.
    onUploadCreate: (req, upload: Upload) =>
      withContext(req, async (ctx) => {
        const input = ctx.input ?? {};
        await createUploadRecord(deps, { projectId: ctx.auth.projectId }, upload.id, upload.size ?? null, input);
        return {};
      }),
    onUploadFinish: (req, upload: Upload) =>
      withContext(req, async (ctx) => {
        // A hard link is what becomes the file (a rename into the blob store): the library still
        // reads the upload after this hook on creation-with-upload; the route removes it after.
        const link = scratchPath(deps, 'tus-done');
        ctx.finished = upload.id;
        try {
          await linkOrCopy(store.localPath(upload.id), link);
          const file = await finishUpload(deps, { projectId: ctx.auth.projectId }, upload.id, link);
          ctx.fileId = file.id;
          return { headers: { [FILE_ID_HEADER]: file.id } };
        } catch (err) {
          // Bytes that cannot become a file (not media, over a limit) will not on a retry either.
          await deleteUploadRecord(deps, upload.id);
          throw err;
        } finally {
          await fs.rm(link, { force: true });
        }
      }),
  });

  return {
    server,
    store,
    contexts,
    async close() {
      await advisory?.close();
    },
  };
}

/** A hard link on the same filesystem (free), else a copy. */
async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await fs.link(from, to);
  } catch {
    await fs.copyFile(from, to);
  }
}
