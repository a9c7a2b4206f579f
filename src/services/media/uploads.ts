import path from 'node:path';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import { transact } from '../../db/transact.js';
import type { UploadsTable } from '../../db/schema.js';
import type { FileObject } from '../../shapes/files.js';
import { createDiskUploadStore, type UploadStore } from '../../storage/tus-store.js';
import { stageLocalFile, type NewFileInput, type Place, type Scope } from './file-store.js';
import { precheck } from './files.js';

// Resumable uploads (tus, issue 25): the record of each upload — whose it is, what file it is to
// become — and what happens at its last byte: it becomes a file exactly as a PUT upload does
// (probed, limits enforced, media created or attached, file.created, automations), in the same
// transaction that notes the file on the upload.

/** Where partial uploads live: the bucket with S3 blob storage, else the data dir (docs/uploads.md). */
export async function openUploadStore(deps: Pick<Deps, 'config'>): Promise<UploadStore> {
  const { storage, uploads } = deps.config;
  if (storage.kind === 's3') {
    const { createS3UploadStore } = await import('../../storage/tus-s3-store.js');
    return createS3UploadStore(storage, uploads.expiryMs);
  }
  return createDiskUploadStore(path.join(deps.config.dataDir, 'uploads'), uploads.expiryMs);
}

/** Checks the file fields (the media exists, the path is free) and records a new upload of the project. */
export async function createUploadRecord(
  deps: Deps,
  scope: Scope,
  id: string,
  length: number | null,
  input: NewFileInput,
): Promise<void> {
  await precheck(deps, scope, input);
  const now = deps.clock.now();
  await deps.db
    .insertInto('uploads')
    .values({
      id,
      project_id: scope.projectId,
      length,
      input: JSON.stringify(input),
      file_id: null,
      created: iso(now),
      expires: iso(new Date(now.getTime() + deps.config.uploads.expiryMs)),
    })
    .execute();
}

/** An upload of the project, or undefined (another project's upload is not found either). */
export async function findUpload(
  deps: Pick<Deps, 'db'>,
  projectId: string,
  id: string,
): Promise<UploadsTable | undefined> {
  return deps.db
    .selectFrom('uploads')
    .selectAll()
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
}

export const isExpired = (deps: Pick<Deps, 'clock'>, row: UploadsTable) =>
  row.file_id === null && Date.parse(row.expires) <= deps.clock.now().getTime();

export async function setUploadLength(deps: Pick<Deps, 'db'>, id: string, length: number): Promise<void> {
  await deps.db.updateTable('uploads').set({ length }).where('id', '=', id).execute();
}

/**
 * The last byte arrived: the upload's bytes at `localPath` become a file of the project. `place`
 * puts them at the file's blob key without this copy where the upload store can (S3: a copy in
 * the bucket); otherwise, or when it answers null, `localPath` is put into the blob store.
 */
export async function finishUpload(
  deps: Deps,
  scope: Scope,
  id: string,
  localPath: string,
  place?: Place,
): Promise<FileObject> {
  const row = await findUpload(deps, scope.projectId, id);
  if (!row) throw new Error(`upload ${id} has no record`);
  const input = JSON.parse(row.input) as NewFileInput;
  const stage = await stageLocalFile(deps, scope, localPath, input, undefined, place);
  try {
    const file = await transact(deps.db, async (trx) => {
      const created = await stage.insert(trx);
      await trx
        .updateTable('uploads')
        .set({ file_id: created.id, length: created.filesize })
        .where('id', '=', id)
        .execute();
      return created;
    });
    stage.committed();
    return file;
  } catch (err) {
    throw await stage.abandon(err);
  }
}

export async function deleteUploadRecord(deps: Pick<Deps, 'db'>, id: string): Promise<void> {
  await deps.db.deleteFrom('uploads').where('id', '=', id).execute();
}

export interface UploadSweep {
  /** Unfinished uploads past their expiry: bytes and record removed. */
  expired: string[];
  /** Bytes without a record (a crash between the two), older than the expiry. */
  orphans: string[];
  /** Records of finished uploads kept for HEAD until their expiry, then removed. */
  finished: number;
  tokens: number;
}

/** Removes expired uploads (MEDIAD_UPLOAD_EXPIRY_HOURS) and their bytes; run by serve periodically and by `mediad blobs sweep`. */
export async function sweepUploads(
  deps: Deps,
  store: UploadStore,
  opts: { dryRun?: boolean } = {},
): Promise<UploadSweep> {
  const now = deps.clock.now();
  const cutoff = iso(now);
  const expiredRows = await deps.db
    .selectFrom('uploads')
    .select(['id', 'file_id'])
    .where('expires', '<=', cutoff)
    .execute();
  const expired = expiredRows.filter((r) => r.file_id === null).map((r) => r.id);
  const known = new Set(
    (await deps.db.selectFrom('uploads').select('id').where('expires', '>', cutoff).execute()).map((r) => r.id),
  );
  const orphans = (await store.list())
    .filter((u) => !known.has(u.id) && !expired.includes(u.id))
    .filter((u) => now.getTime() - u.modified.getTime() >= deps.config.uploads.expiryMs)
    .map((u) => u.id);
  if (opts.dryRun) return { expired, orphans, finished: expiredRows.length - expired.length, tokens: 0 };
  // Records go after their bytes: a crash in between leaves a record whose bytes are gone, swept next time.
  for (const id of [...expired, ...orphans]) await store.remove(id);
  await deps.db.deleteFrom('uploads').where('expires', '<=', cutoff).execute();
  const tokens = await deps.db.deleteFrom('upload_tokens').where('expires', '<=', cutoff).executeTakeFirst();
  return {
    expired,
    orphans,
    finished: expiredRows.length - expired.length,
    tokens: Number(tokens.numDeletedRows),
  };
}
