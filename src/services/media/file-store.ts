import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Insertable, Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import type { Database, FilesTable } from '../../db/schema.js';
import { bumpCounter } from '../../db/queries/counters.js';
import { touchMedia } from '../../db/queries/media.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/errors.js';
import { heldWrite, transact, valuesOf } from '../../db/transact.js';
import { AppError } from '../../errors.js';
import { recordEvent } from '../../events/record.js';
import { crashPoint } from '../../faults.js';
import { newId } from '../../ids.js';
import { averageColor, probeFile, type ProbeResult } from '../../media/index.js';
import type { Chain } from '../../shapes/events.js';
import { toFileObject, toMediaObject, type FileObject } from '../../shapes/files.js';
import { fileBlobKey, packageEntryKey, packageKey } from '../../storage/keys.js';
import type { BlobStat } from '../../storage/blob-store.js';
import type { FilePackage } from '../../kinds/define.js';
import { abandonPut, intendPut, settlePut } from './blob-journal.js';
import { findMedia } from './media.js';
import { checkFilename, normalizeFolder } from './paths.js';

// Storing files in two steps, because bytes and rows live in two stores: stage (probe, put the
// blob under a key nobody references yet, announced in the blob journal), then insert the rows
// in a transaction the caller opens — the worker pool ends a task in that same transaction. A
// failed transaction abandons the staged blobs.

/** The project, and for a task's work the automations whose runs led to it (carried by its events). */
export type Scope = { projectId: string; chain?: Chain };

export interface NewFileInput {
  media_id?: string;
  /** The title of the media made for the file (none with media_id): a fetched source's name. */
  title?: string;
  folder?: string;
  filename?: string;
  ref?: string;
  metadata?: Record<string, unknown>;
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

/** Blobs stored and announced, whose rows are not committed yet. */
export interface Staged<T> {
  /** Inserts the rows (and their events) in the caller's transaction; the blobs are settled with it. */
  insert(trx: Kysely<Database>): Promise<T>;
  /** After the transaction committed. */
  committed(): void;
  /** After the transaction failed: the blobs go; returns the error to throw (a taken path is a 409). */
  abandon(err: unknown): Promise<unknown>;
}

/** A fresh path in the scratch directory; the caller removes it. */
export function scratchPath(deps: Pick<Deps, 'tmpDir'>, label: string): string {
  return path.join(deps.tmpDir, `${label}-${randomBytes(8).toString('hex')}`);
}

export function normalizeTarget(input: NewFileInput): { folder: string; filename?: string } {
  return {
    folder: normalizeFolder(input.folder),
    filename: input.filename === undefined ? undefined : checkFilename(input.filename),
  };
}

export const notFoundMedia = (id: string) =>
  new AppError('not_found', `no media ${id} in this project`, {
    details: [{ field: 'media_id', message: 'not found' }],
  });
export const pathTaken = (folder: string, filename: string) =>
  new AppError(
    'file_conflict',
    `a file already exists at "${folder ? `${folder}/` : ''}${filename}"; choose another filename or folder, or delete that file first`,
  );

/** Puts a blob's bytes at its key from where they already are (a tus upload in the bucket); null: put the local file. */
export type Place = (key: string) => Promise<BlobStat | null>;

/** Package entries stored at once (their fsyncs overlap; a 60 s ladder has a few hundred). */
const PACKAGE_PUTS = 8;

/**
 * Puts the blobs, announced first; on failure nothing stays. `keys`: what the journal announces,
 * when not the blobs' own keys (a package's entries are announced by its package key).
 */
async function putBlobs(
  deps: Deps,
  blobs: { key: string; path: string; mime: string; entry?: boolean; place?: Place }[],
  keys = blobs.map((b) => b.key),
): Promise<number[]> {
  await intendPut(deps, keys);
  const sizes: number[] = new Array<number>(blobs.length).fill(0);
  const put = async (i: number) => {
    const b = blobs[i]!;
    const placed = b.place ? await b.place(b.key) : null;
    sizes[i] = (placed ?? (await deps.blobs.putFile(b.key, b.path, { contentType: b.mime }))).size;
  };
  try {
    // A package's entries (many small segments, each fsynced) go PACKAGE_PUTS at a time, then
    // the files themselves one by one, so a head is stored only after its entries.
    const entries = blobs.flatMap((b, i) => (b.entry ? [i] : []));
    for (let at = 0; at < entries.length; at += PACKAGE_PUTS) {
      // allSettled: nothing may still be writing when a failure abandons what was put.
      const done = await Promise.allSettled(entries.slice(at, at + PACKAGE_PUTS).map(put));
      const failed = done.find((d) => d.status === 'rejected');
      if (failed) throw failed.reason;
    }
    for (const [i, b] of blobs.entries()) if (!b.entry) await put(i);
  } catch (err) {
    await abandonPut(deps, keys);
    throw err;
  }
  crashPoint(deps.config, 'blob.put.written');
  return sizes;
}

/**
 * `conflict`: the error of a file path already taken; `gone`: of a row the new rows name (their
 * media) deleted meanwhile. Either shows when the rows are written, which may be at the end of the
 * transaction: the caller's abandon() says which it was.
 */
function staged<T>(
  deps: Deps,
  keys: string[],
  insert: (trx: Kysely<Database>) => Promise<T>,
  conflict: () => AppError,
  gone?: () => AppError,
): Staged<T> {
  return {
    async insert(trx) {
      const result = await insert(trx);
      await settlePut(trx, keys);
      return result;
    },
    committed: () => crashPoint(deps.config, 'blob.put.committed'),
    async abandon(err) {
      await abandonPut(deps, keys);
      if (isUniqueViolation(err)) return conflict();
      return gone && isForeignKeyViolation(err) ? gone() : err;
    },
  };
}

/**
 * Stages a complete local file (a download or an upload) as a new file of the project, in
 * `input.media_id` or in a new media whose facts (kind, size, duration, average colour) come
 * from it. Probing checks the limits first.
 */
export async function stageLocalFile(
  deps: Deps,
  scope: Scope,
  localPath: string,
  input: NewFileInput,
  target = normalizeTarget(input),
  place?: Place,
): Promise<Staged<FileObject>> {
  const probe = await probeFile(localPath, deps.config.limits);
  const fileId = newId('file');
  const filename = target.filename ?? `${fileId}.${probe.extension}`;
  const existingMedia = input.media_id ? await findMedia(deps.db, scope.projectId, input.media_id) : undefined;
  const needsMediaFacts = !existingMedia || existingMedia.kind === null;
  const background = needsMediaFacts
    ? await averageColor(localPath, probe, { maxPixels: deps.config.limits.maxPixels }).catch(() => null)
    : null;
  const blobKey = fileBlobKey(scope.projectId, fileId);
  const [size] = await putBlobs(deps, [{ key: blobKey, path: localPath, mime: probe.mime, place }]);

  return staged(
    deps,
    [blobKey],
    async (trx) => {
      const now = iso(deps.clock.now());
      let mediaId = input.media_id;
      const facts = {
        kind: probe.kind,
        width: probe.width ?? null,
        height: probe.height ?? null,
        duration: probe.duration ?? null,
        background,
      };
      if (!mediaId) {
        mediaId = newId('media');
        await trx
          .insertInto('media')
          .values({
            id: mediaId,
            project_id: scope.projectId,
            title: input.title ?? null,
            alt: null,
            metadata: '{}',
            created: now,
            updated: now,
            ...facts,
          })
          .execute();
        await bumpCounter(trx, scope.projectId, 'media', 1);
      } else {
        const media = await findMedia(trx, scope.projectId, mediaId);
        if (!media) throw notFoundMedia(mediaId);
        if (media.kind === null)
          await trx
            .updateTable('media')
            .set({ ...facts, updated: now })
            .where('id', '=', mediaId)
            .execute();
      }
      const { file, row } = await insertFileRow(deps, trx, scope, {
        id: fileId,
        mediaId,
        facts: probe,
        probe,
        size: size!,
        blobKey,
        folder: target.folder,
        filename,
        ref: input.ref ?? (input.media_id ? null : 'original'),
        metadata: input.metadata,
        now,
      });
      if (!input.media_id) {
        const media = await findMedia(trx, scope.projectId, mediaId);
        if (media)
          await recordEvent(
            trx,
            scope.projectId,
            'media.created',
            toMediaObject(deps.config.publicUrl, media, [row]),
            now,
            scope.chain,
          );
      }
      return file;
    },
    () => pathTaken(target.folder, filename),
  );
}

/** Stores a local file as a new file now (POST /files, uploads): stage, then insert in a transaction of its own. */
export async function storeLocalFile(
  deps: Deps,
  scope: Scope,
  localPath: string,
  input: NewFileInput,
  target = normalizeTarget(input),
): Promise<FileObject> {
  const stage = await stageLocalFile(deps, scope, localPath, input, target);
  try {
    const file = await transact(deps.db, (trx) => stage.insert(trx));
    stage.committed();
    return file;
  } catch (err) {
    throw await stage.abandon(err);
  }
}

export interface OutputFile {
  path: string;
  facts: FileFacts;
  probe?: ProbeResult;
  folder: string;
  filename?: string;
  ref: string | null;
  metadata?: Record<string, unknown>;
  /** Entries stored beside the file under its package key; the file's size counts them. */
  package?: FilePackage;
}

/** Stages task outputs into an existing media (all blobs first; the rows go in the caller's transaction). */
export async function stageOutputs(
  deps: Deps,
  scope: Scope,
  mediaId: string,
  outputs: OutputFile[],
): Promise<Staged<FileObject[]>> {
  const planned = outputs.map((out) => {
    const id = newId('file');
    const key = fileBlobKey(scope.projectId, id);
    // A package's entries go first, its head last: a head never points at entries not yet written.
    const pkg = out.package;
    const entries = pkg
      ? pkg.entries.map((e) => ({
          key: packageEntryKey(key, e.name),
          path: path.join(pkg.dir, e.name),
          mime: e.mime,
          entry: true,
        }))
      : [];
    const journal = out.package ? [key, packageKey(key)] : [key];
    return { out, id, key, path: out.path, mime: out.facts.mime, entries, journal };
  });
  const blobs = planned.flatMap((p) => [...p.entries, { key: p.key, path: p.path, mime: p.mime }]);
  const allSizes = await putBlobs(
    deps,
    blobs,
    planned.flatMap((p) => p.journal),
  );
  // Per output: its head's bytes plus its package's.
  let at = 0;
  const sizes = planned.map((p) => {
    const n = p.entries.length + 1;
    const total = allSizes.slice(at, at + n).reduce((a, b) => a + b, 0);
    at += n;
    return total;
  });
  return staged(
    deps,
    planned.flatMap((p) => p.journal),
    async (trx) => {
      const now = iso(deps.clock.now());
      const files: FileObject[] = [];
      // The rows are written with the transaction's last writes (one round trip on PostgreSQL).
      // The media (the input's, so of this project) may have been deleted while the task ran: the
      // rows' foreign key says so then, and abandon() answers not_found (no read of the media first,
      // which could not have seen a deletion committed after it anyway).
      for (const [i, p] of planned.entries()) {
        const filename = p.out.filename ?? `${p.id}.${p.out.facts.extension}`;
        const row = {
          id: p.id,
          mediaId,
          facts: p.out.facts,
          probe: p.out.probe,
          size: sizes[i]!,
          blobKey: p.key,
          folder: p.out.folder,
          filename,
          ref: p.out.ref,
          metadata: p.out.metadata,
          now,
        };
        files.push((await insertFileRow(deps, trx, scope, row, { atEnd: true })).file);
      }
      // At the transaction's end: on PostgreSQL the media row stays locked until the commit.
      await touchMedia(trx, mediaId, now);
      return files;
    },
    () =>
      new AppError(
        'file_conflict',
        'a file already exists at the output folder/filename; choose another filename or folder',
      ),
    () => notFoundMedia(mediaId),
  );
}

interface NewRow {
  id: string;
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
  /** 'processing': a package playable while its task still makes it (announced as file.playable). */
  status?: 'ready' | 'processing';
}

/** The columns a file's facts, size, metadata and probe set: on insert, and when a processing package is finalised. */
export function factColumns(r: Pick<NewRow, 'facts' | 'size' | 'metadata' | 'probe'>) {
  return {
    kind: r.facts.kind,
    format: r.facts.format,
    type: r.facts.mime,
    width: r.facts.width ?? null,
    height: r.facts.height ?? null,
    duration: r.facts.duration ?? null,
    filesize: r.size,
    metadata: JSON.stringify(r.metadata ?? {}),
    probe: r.probe ? JSON.stringify(r.probe) : null,
  };
}

const insertFiles = (trx: Kysely<Database>, rows: Insertable<FilesTable>[]) => trx.insertInto('files').values(rows);

// File rows written with the transaction's last writes (db/transact.ts), in id order.
const heldFileRows = heldWrite('files', { args: valuesOf<Insertable<FilesTable>>, build: insertFiles });

/**
 * Inserts a file row with its count and its event (file.created; file.playable for a processing
 * package). `atEnd`: with the transaction's last writes, when nothing in it reads the row meanwhile;
 * its constraints (path taken, media gone) then fail the transaction's end rather than this call.
 */
export async function insertFileRow(
  deps: Deps,
  trx: Kysely<Database>,
  scope: Scope,
  r: NewRow,
  { atEnd = false } = {},
) {
  const row = {
    id: r.id,
    project_id: scope.projectId,
    media_id: r.mediaId,
    ...factColumns(r),
    folder: r.folder,
    filename: r.filename,
    ref: r.ref,
    status: r.status ?? 'ready',
    blob_key: r.blobKey,
    created: r.now,
    updated: r.now,
  };
  const held = atEnd ? heldFileRows.rowsIn(trx) : null;
  if (held) held.set(row.id, row);
  else await insertFiles(trx, [row]).execute();
  await bumpCounter(trx, scope.projectId, 'files', 1);
  const file = toFileObject(deps.config.publicUrl, row);
  const event = row.status === 'processing' ? 'file.playable' : 'file.created';
  await recordEvent(trx, scope.projectId, event, file, r.now, scope.chain);
  return { file, row };
}
