import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import { eventsRecorded } from '../events/dispatcher.js';
import type { Database } from '../db/schema.js';
import { iso } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { averageColor, probeFile, type ProbeResult } from '../media/index.js';
import { fileBlobKey } from '../storage/keys.js';
import { bumpCounter, readCounter } from '../db/queries/counters.js';
import { recordEvent, type Chain } from '../db/queries/events.js';
import { FILE_COLUMNS } from '../db/queries/files.js';
import { isUniqueViolation } from '../db/errors.js';
import { compiledOnce, perLimit } from '../db/compiled.js';
import { JsonText, type RenderedPage } from '../http/envelope.js';
import { checkFilename, normalizeFolder } from './paths.js';
import { FILE_LIST_JSON, toFileObject, toMediaObject, type FileObject, type FileRow } from './representations.js';
import { findMedia } from './media.js';
import { abandonPut, completeDelete, intendDelete, intendPut, settlePut } from './blob-journal.js';
import { crashPoint } from '../faults.js';

export interface NewFileInput {
  media_id?: string;
  folder?: string;
  filename?: string;
  ref?: string;
  metadata?: Record<string, unknown>;
}

/** The project, and for a task's work the automations whose runs led to it (carried by its events). */
type Scope = { projectId: string; chain?: Chain };


/** A fresh path in the scratch directory; the caller removes it. */
export function scratchPath(deps: Pick<Deps, 'tmpDir'>, label: string): string {
  return path.join(deps.tmpDir, `${label}-${randomBytes(8).toString('hex')}`);
}

/** POST /files: fetch through the guarded client, then store as an uploaded file. */
export async function createFileFromUrl(deps: Deps, scope: Scope, url: string, input: NewFileInput, signal?: AbortSignal): Promise<FileObject> {
  const target = await precheck(deps, scope, input);
  const tmp = scratchPath(deps, 'ingest');
  try {
    await deps.outbound.download(url, tmp, { signal });
    return await storeLocalFile(deps, scope, tmp, input, target);
  } finally {
    await fs.rm(tmp, { force: true });
  }
}

/** What is known about a file's bytes: probed for inputs, stated by the producer for task outputs. */
export interface FileFacts {
  kind: string;
  format: string | null;
  extension: string;
  mime: string;
  width?: number;
  height?: number;
  duration?: number;
}

export type TransactionHook<T> = (trx: Kysely<Database>, stored: T) => Promise<void>;

/**
 * Stores a complete local file (a download or an upload) as a file of the project:
 * probe, move the bytes into the blob store, then write rows and events in one transaction.
 * The blob is written first under a key nobody references yet (announced in the blob journal,
 * so a crash before the commit leaves an entry the sweeper settles), and readers never see a
 * row without bytes.
 * `inTransaction` runs in that same transaction (a task finishing with this file).
 */
export async function storeLocalFile(deps: Deps, scope: Scope, localPath: string, input: NewFileInput, target = normalizeTarget(input), inTransaction?: TransactionHook<FileObject>): Promise<FileObject> {
  const probe = await probeFile(localPath, deps.config.limits);
  const fileId = newId('file');
  const filename = target.filename ?? `${fileId}.${probe.extension}`;
  const existingMedia = input.media_id ? await findMedia(deps.db, scope.projectId, input.media_id) : undefined;
  const needsMediaFacts = !existingMedia || existingMedia.kind === null;
  const background = needsMediaFacts ? await averageColor(localPath, probe, { maxPixels: deps.config.limits.maxPixels }).catch(() => null) : null;

  const blobKey = fileBlobKey(scope.projectId, fileId);
  await intendPut(deps, [blobKey]);
  let stat;
  try {
    stat = await deps.blobs.putFile(blobKey, localPath, { contentType: probe.mime });
  } catch (err) {
    await abandonPut(deps, [blobKey]);
    throw err;
  }
  crashPoint(deps.config, 'blob.put.written');
  try {
    const stored = await deps.db.transaction().execute(async (trx) => {
      const now = iso(deps.clock.now());
      let mediaId = input.media_id;
      const facts = mediaFacts(probe, background);
      if (!mediaId) {
        mediaId = newId('media');
        await trx.insertInto('media').values({ id: mediaId, project_id: scope.projectId, title: null, alt: null, metadata: '{}', created: now, updated: now, ...facts }).execute();
        await bumpCounter(trx, scope.projectId, 'media', 1);
      } else {
        const media = await findMedia(trx, scope.projectId, mediaId);
        if (!media) throw notFoundMedia(mediaId);
        if (media.kind === null) await trx.updateTable('media').set({ ...facts, updated: now }).where('id', '=', mediaId).execute();
      }
      const { file, row } = await insertFileRow(deps, trx, {
        id: fileId, projectId: scope.projectId, chain: scope.chain, mediaId, facts: probe, probe, size: stat.size, blobKey, folder: target.folder, filename,
        ref: input.ref ?? (input.media_id ? null : 'original'), metadata: input.metadata, now,
      });
      if (!input.media_id) {
        const media = await findMedia(trx, scope.projectId, mediaId);
        await recordEvent(trx, scope.projectId, 'media.created', toMediaObject(deps.config.publicUrl, media!, [row]), now, scope.chain);
      }
      if (inTransaction) await inTransaction(trx, file);
      await settlePut(trx, [blobKey]);
      return file;
    }).finally(eventsRecorded);
    crashPoint(deps.config, 'blob.put.committed');
    return stored;
  } catch (err) {
    await abandonPut(deps, [blobKey]);
    if (isUniqueViolation(err)) throw pathTaken(target.folder, filename);
    throw err;
  }
}

export interface OutputFile {
  path: string;
  facts: FileFacts;
  probe?: ProbeResult;
  folder: string;
  filename?: string;
  ref: string | null;
}

/** Stores task outputs into an existing media: all blobs first, then every row and `inTransaction` in one transaction. */
export async function storeOutputFiles(deps: Deps, scope: Scope, mediaId: string, outputs: OutputFile[], inTransaction: TransactionHook<FileObject[]>): Promise<FileObject[]> {
  const planned = outputs.map((out) => {
    const id = newId('file');
    return { out, id, blobKey: fileBlobKey(scope.projectId, id) };
  });
  const keys = planned.map((p) => p.blobKey);
  await intendPut(deps, keys);
  try {
    const prepared: { out: OutputFile; id: string; blobKey: string; size: number }[] = [];
    for (const p of planned) prepared.push({ ...p, size: (await deps.blobs.putFile(p.blobKey, p.out.path, { contentType: p.out.facts.mime })).size });
    crashPoint(deps.config, 'blob.put.written');
    const stored = await deps.db.transaction().execute(async (trx) => {
      const now = iso(deps.clock.now());
      if (!(await findMedia(trx, scope.projectId, mediaId))) throw notFoundMedia(mediaId);
      const files: FileObject[] = [];
      for (const p of prepared) {
        const filename = p.out.filename ?? `${p.id}.${p.out.facts.extension}`;
        files.push((await insertFileRow(deps, trx, {
          id: p.id, projectId: scope.projectId, chain: scope.chain, mediaId, facts: p.out.facts, probe: p.out.probe, size: p.size, blobKey: p.blobKey, folder: p.out.folder, filename, ref: p.out.ref, now,
        })).file);
      }
      await trx.updateTable('media').set({ updated: now }).where('id', '=', mediaId).execute();
      await inTransaction(trx, files);
      await settlePut(trx, keys);
      return files;
    }).finally(eventsRecorded);
    crashPoint(deps.config, 'blob.put.committed');
    return stored;
  } catch (err) {
    await abandonPut(deps, keys);
    if (isUniqueViolation(err)) throw new AppError('file_conflict', 'a file already exists at the output folder/filename; choose another filename or folder');
    throw err;
  }
}

interface NewRow {
  id: string;
  projectId: string;
  chain?: Chain;
  mediaId: string;
  facts: FileFacts;
  probe?: ProbeResult;
  size: number;
  blobKey: string;
  folder: string;
  filename: string;
  ref: string | null;
  metadata?: Record<string, unknown>;
  now: string;
}

async function insertFileRow(deps: Deps, trx: Kysely<Database>, r: NewRow) {
  const row = {
    id: r.id, project_id: r.projectId, media_id: r.mediaId, kind: r.facts.kind, format: r.facts.format, type: r.facts.mime,
    width: r.facts.width ?? null, height: r.facts.height ?? null, duration: r.facts.duration ?? null, filesize: r.size,
    folder: r.folder, filename: r.filename, ref: r.ref, metadata: JSON.stringify(r.metadata ?? {}), status: 'ready', blob_key: r.blobKey,
    probe: r.probe ? JSON.stringify(r.probe) : null, created: r.now, updated: r.now,
  };
  await trx.insertInto('files').values(row).execute();
  await bumpCounter(trx, r.projectId, 'files', 1);
  const file = toFileObject(deps.config.publicUrl, row);
  await recordEvent(trx, r.projectId, 'file.created', file, r.now, r.chain);
  return { file, row };
}

function mediaFacts(probe: ProbeResult, background: string | null) {
  return { kind: probe.kind, width: probe.width ?? null, height: probe.height ?? null, duration: probe.duration ?? null, background };
}

export function normalizeTarget(input: NewFileInput): { folder: string; filename?: string } {
  return { folder: normalizeFolder(input.folder), filename: input.filename === undefined ? undefined : checkFilename(input.filename) };
}

/** Cheap checks before a long download: the media exists, the chosen path is free. */
export async function precheck(deps: Deps, scope: Scope, input: NewFileInput) {
  const target = normalizeTarget(input);
  if (input.media_id && !(await findMedia(deps.db, scope.projectId, input.media_id))) throw notFoundMedia(input.media_id);
  if (target.filename && (await findFileByPath(deps, scope.projectId, target.folder, target.filename))) throw pathTaken(target.folder, target.filename);
  return target;
}

const notFoundMedia = (id: string) => new AppError('not_found', `no media ${id} in this project`, { details: [{ field: 'media_id', message: 'not found' }] });
const pathTaken = (folder: string, filename: string) =>
  new AppError('file_conflict', `a file already exists at "${folder ? `${folder}/` : ''}${filename}"; choose another filename or folder, or delete that file first`);

const fileById = compiledOnce((db, projectId: string, id: string) =>
  db.selectFrom('files').select([...FILE_COLUMNS, 'blob_key', 'probe']).where('project_id', '=', projectId).where('id', '=', id), 2);

const filesPage = perLimit((limit) => compiledOnce((db, projectId: string, offset: number) =>
  db.selectFrom('files').select(FILE_COLUMNS).where('project_id', '=', projectId).orderBy('created', 'desc').orderBy('id', 'desc').limit(sql.lit(limit)).offset(offset), 2));

export async function findFileRow(deps: Pick<Deps, 'db'>, projectId: string, id: string) {
  return (await fileById(deps.db, projectId, id))[0];
}

export async function findFileByPath(deps: Pick<Deps, 'db'>, projectId: string, folder: string, filename: string) {
  return deps.db.selectFrom('files').select([...FILE_COLUMNS, 'blob_key'])
    .where('project_id', '=', projectId).where('folder', '=', folder).where('filename', '=', filename).executeTakeFirst();
}

export async function getFile(deps: Deps, scope: Scope, id: string): Promise<FileObject> {
  const row = await findFileRow(deps, scope.projectId, id);
  if (!row) throw new AppError('not_found', `no file ${id} in this project`);
  return toFileObject(deps.config.publicUrl, row);
}

/** A page of files, rendered as JSON where the rows are read (see nativeJson). */
export async function listFiles(deps: Deps, scope: Scope, page: number, limit: number): Promise<RenderedPage<FileObject>> {
  const [items, total] = await Promise.all([
    filesPage(limit).rendered(deps.db, FILE_LIST_JSON, deps.config.publicUrl, scope.projectId, (page - 1) * limit),
    readCounter(deps.db, scope.projectId, 'files'),
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
  const changes: Partial<FileRow> = {};
  if (patch.folder !== undefined) changes.folder = normalizeFolder(patch.folder);
  if (patch.filename !== undefined) changes.filename = checkFilename(patch.filename);
  if (patch.ref !== undefined) changes.ref = patch.ref;
  if (patch.metadata !== undefined) changes.metadata = JSON.stringify(patch.metadata);
  try {
    return await deps.db.transaction().execute(async (trx) => {
      const now = iso(deps.clock.now());
      const res = await trx.updateTable('files').set({ ...changes, updated: now }).where('project_id', '=', scope.projectId).where('id', '=', id).executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) throw new AppError('not_found', `no file ${id} in this project`);
      const row = (await trx.selectFrom('files').select(FILE_COLUMNS).where('id', '=', id).executeTakeFirstOrThrow());
      await trx.updateTable('media').set({ updated: now }).where('id', '=', row.media_id).execute();
      return toFileObject(deps.config.publicUrl, row);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('file_conflict', 'another file already has that folder and filename');
    throw err;
  }
}

/** Removes the row (and its media's reference) first, then the bytes; the blob journal covers a crash in between. */
export async function deleteFile(deps: Deps, scope: Scope, id: string): Promise<void> {
  const blobKey = await deps.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('files').select([...FILE_COLUMNS, 'blob_key']).where('project_id', '=', scope.projectId).where('id', '=', id).executeTakeFirst();
    if (!row) throw new AppError('not_found', `no file ${id} in this project`);
    const now = iso(deps.clock.now());
    await trx.deleteFrom('files').where('id', '=', id).execute();
    await bumpCounter(trx, scope.projectId, 'files', -1);
    await trx.updateTable('media').set({ updated: now }).where('id', '=', row.media_id).execute();
    await recordEvent(trx, scope.projectId, 'file.deleted', toFileObject(deps.config.publicUrl, row), now);
    await intendDelete(trx, [row.blob_key], now);
    return row.blob_key;
  });
  eventsRecorded();
  await completeDelete(deps, [blobKey]);
}
