import fs from 'node:fs/promises';
import { MemoryLocker, Server } from '@tus/server';
import type { Locker, Upload } from '@tus/utils';
import type { Deps } from '../deps.js';
import { createAdvisoryLocker } from '../db/advisory-locker.js';
import { isAppError } from '../errors.js';
import { newId } from '../ids.js';
import type { AuthContext } from '../services/access.js';
import { scratchPath } from '../services/media/file-store.js';
import { createUploadRecord, deleteUploadRecord, finishUpload } from '../services/media/uploads.js';
import type { UploadStore } from '../storage/tus-store.js';
import type { UploadInput } from './tus-metadata.js';
import { FILE_ID_HEADER, TUS_PATH } from './tus-protocol.js';

// The tus server (@tus/server) as mediad uses it: uploads named upl_…, URLs on MEDIAD_PUBLIC_URL
// (the library would build http:// ones behind TLS), a lock that works across processes on
// PostgreSQL (advisory locks) and in memory on SQLite (one process owns the database file), and
// two hooks: creation records the upload for its project after checking its file fields; the last
// byte makes it a file. Each request carries its caller in a context kept beside the Web Request
// the route builds (uploads-tus.ts); an error of mediad's own is kept there, so the answer is
// the API's error envelope rather than tus's text.

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

/** The tus server over `store`; uploads-tus.ts imports this module on the first upload request. */
export async function createTusService(deps: Deps, store: UploadStore): Promise<TusService> {
  const datastore = await store.datastore();
  const advisory = deps.config.database.dialect === 'postgres' ? createAdvisoryLocker(deps.config.database.url) : null;
  // Tracked so that a PATCH body handed to the store stops when the library stops its request.
  const locker: Locker = store.handoff.tracking(advisory ?? new MemoryLocker());
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
    datastore,
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
        // A local copy of the bytes is probed (disk: a hard link, renamed into the blob store; S3: a
        // download, while the object is copied to the file's key inside the bucket). The library
        // still reads the upload after this hook on creation-with-upload: the route removes it after.
        const local = scratchPath(deps, 'tus-done');
        ctx.finished = upload.id;
        try {
          await store.fetch(upload.id, local);
          const file = await finishUpload(deps, { projectId: ctx.auth.projectId }, upload.id, local, (key) =>
            store.place(upload.id, key),
          );
          ctx.fileId = file.id;
          return { headers: { [FILE_ID_HEADER]: file.id } };
        } catch (err) {
          // Bytes that cannot become a file (not media, over a limit) will not on a retry either.
          await deleteUploadRecord(deps, upload.id);
          throw err;
        } finally {
          await fs.rm(local, { force: true });
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
