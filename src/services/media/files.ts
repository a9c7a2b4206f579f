import fs from 'node:fs/promises';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import type { FilesTable } from '../../db/schema.js';
import { bumpCounter } from '../../db/queries/counters.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { PageRequest } from '../../db/paginate.js';
import { readCounter, readFile, readFileJson, readFilesPageJson } from '../../db/hot-reads.js';
import { transact } from '../../db/transact.js';
import { AppError } from '../../errors.js';
import { recordEvent } from '../../events/record.js';
import { sourceName } from '../../net/index.js';
import { JsonText, type RenderedPage } from '../../db/renderers.js';
import { FILE_COLUMNS, toFileObject, type FileObject } from '../../shapes/files.js';
import { completeDelete, intendDelete, rowBlobKeys } from './blob-journal.js';
import {
  normalizeTarget,
  notFoundMedia,
  pathTaken,
  scratchPath,
  storeLocalFile,
  type NewFileInput,
  type Scope,
} from './file-store.js';
import { findMedia } from './media.js';
import { dropDerivativesOf } from './image-url-cache.js';
import { checkFilename, normalizeFolder } from './paths.js';

// Files as an API resource. Storing new ones is file-store.ts.

/** POST /files: fetch through the guarded client, then store as an uploaded file. */
export async function createFileFromUrl(
  deps: Deps,
  scope: Scope,
  url: string,
  input: NewFileInput,
  signal?: AbortSignal,
): Promise<FileObject> {
  const target = await precheck(deps, scope, input);
  const tmp = scratchPath(deps, 'ingest');
  try {
    await deps.outbound.download(url, tmp, { signal });
    // The media is titled by the source's file name (the stored file's own name stays unique).
    const title = input.media_id ? undefined : sourceName(url);
    return await storeLocalFile(deps, scope, tmp, { ...input, ...(title ? { title } : {}) }, target);
  } finally {
    await fs.rm(tmp, { force: true });
  }
}

/** Cheap checks before a long download: the media exists, the chosen path is free. */
export async function precheck(deps: Deps, scope: Scope, input: NewFileInput) {
  const target = normalizeTarget(input);
  if (input.media_id && !(await findMedia(deps.db, scope.projectId, input.media_id)))
    throw notFoundMedia(input.media_id);
  if (target.filename && (await findFileByPath(deps, scope.projectId, target.folder, target.filename)))
    throw pathTaken(target.folder, target.filename);
  return target;
}

/** A file of the project with its blob key and probe (the hot read), or undefined. */
export function findFileRow(deps: Pick<Deps, 'db' | 'reader'>, projectId: string, id: string) {
  return readFile(deps, projectId, id);
}

export async function findFileByPath(deps: Pick<Deps, 'db'>, projectId: string, folder: string, filename: string) {
  return deps.db
    .selectFrom('files')
    .select([...FILE_COLUMNS, 'blob_key'])
    .where('project_id', '=', projectId)
    .where('folder', '=', folder)
    .where('filename', '=', filename)
    .executeTakeFirst();
}

/** A file, rendered as JSON where it is read (see http/json-text.ts). */
export async function getFile(deps: Deps, scope: Scope, id: string): Promise<JsonText<FileObject>> {
  const text = await readFileJson(deps, deps.config.publicUrl, scope.projectId, id);
  if (!text) throw new AppError('not_found', `no file ${id} in this project`);
  return new JsonText<FileObject>(text);
}

/** A page of files, rendered as JSON where the rows are read (see http/json-text.ts). */
export async function listFiles(
  deps: Deps,
  scope: Scope,
  { page, limit }: PageRequest,
): Promise<RenderedPage<FileObject>> {
  const [items, total] = await Promise.all([
    readFilesPageJson(deps, deps.config.publicUrl, scope.projectId, limit, (page - 1) * limit),
    readCounter(deps, scope.projectId, 'files'),
  ]);
  return { items: new JsonText<FileObject[]>(items), total, page, limit };
}

export interface FilePatch {
  folder?: string;
  filename?: string;
  ref?: string | null;
  metadata?: Record<string, unknown>;
}

export async function updateFile(deps: Deps, scope: Scope, id: string, patch: FilePatch): Promise<FileObject> {
  const changes: Partial<FilesTable> = {};
  if (patch.folder !== undefined) changes.folder = normalizeFolder(patch.folder);
  if (patch.filename !== undefined) changes.filename = checkFilename(patch.filename);
  if (patch.ref !== undefined) changes.ref = patch.ref;
  if (patch.metadata !== undefined) changes.metadata = JSON.stringify(patch.metadata);
  try {
    return await transact(deps.db, async (trx) => {
      const now = iso(deps.clock.now());
      const row = await trx
        .updateTable('files')
        .set({ ...changes, updated: now })
        .where('project_id', '=', scope.projectId)
        .where('id', '=', id)
        .returning(FILE_COLUMNS)
        .executeTakeFirst();
      if (!row) throw new AppError('not_found', `no file ${id} in this project`);
      await trx.updateTable('media').set({ updated: now }).where('id', '=', row.media_id).execute();
      return toFileObject(deps.config.publicUrl, row);
    });
  } catch (err) {
    if (isUniqueViolation(err))
      throw new AppError('file_conflict', 'another file already has that folder and filename');
    throw err;
  }
}

/** Removes the row (and its media's reference) first, then the bytes; the blob journal covers a crash in between. */
export async function deleteFile(deps: Deps, scope: Scope, id: string): Promise<void> {
  const blobKey = await transact(deps.db, async (trx) => {
    const row = await trx
      .selectFrom('files')
      .select([...FILE_COLUMNS, 'blob_key'])
      .where('project_id', '=', scope.projectId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw new AppError('not_found', `no file ${id} in this project`);
    const now = iso(deps.clock.now());
    await trx.deleteFrom('files').where('id', '=', id).execute();
    await bumpCounter(trx, scope.projectId, 'files', -1);
    await trx.updateTable('media').set({ updated: now }).where('id', '=', row.media_id).execute();
    await recordEvent(trx, scope.projectId, 'file.deleted', toFileObject(deps.config.publicUrl, row), now);
    await intendDelete(trx, rowBlobKeys(row), now);
    return rowBlobKeys(row);
  });
  await completeDelete(deps, blobKey);
  await dropDerivativesOf(deps, [id]); // image URLs' cached results (issue 24)
}
