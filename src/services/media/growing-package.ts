import fs from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import type { Database } from '../../db/schema.js';
import { bumpCounter } from '../../db/queries/counters.js';
import { isUniqueViolation } from '../../db/errors.js';
import { transact } from '../../db/transact.js';
import { AppError } from '../../errors.js';
import { recordEvent } from '../../events/record.js';
import { crashPoint } from '../../faults.js';
import { newId } from '../../ids.js';
import { isPlaylistEntry, packageEntryMime } from '../../media/index.js';
import { FILE_COLUMNS, toFileObject, type FileObject } from '../../shapes/files.js';
import { fileBlobKey, packageEntryKey, packageKey } from '../../storage/keys.js';
import {
  abandonPut,
  completeDelete,
  intendDelete,
  intendPut,
  reassertPut,
  rowBlobKeys,
  settlePut,
  writerGone,
} from './blob-journal.js';
import {
  factColumns,
  insertFileRow,
  notFoundMedia,
  scratchPath,
  type FileFacts,
  type OutputFile,
  type Scope,
  type Staged,
} from './file-store.js';
import { findMedia } from './media.js';

// A package stored while its task still makes it (adaptive_video, "playable early" in
// docs/tasks.md): finished segments and the growing playlists go to the blob store as FFmpeg
// writes them; once every rendition has a segment, the head (the master playlist) is stored and
// the output's file row is committed with status `processing` (event file.playable). The task's
// end finalises that row (status ready, its facts and size, event file.created) in the
// transaction that completes the task. The blob journal names the package from the first byte
// on; a failure discards the row and every entry, and a process that dies leaves a processing
// row that the next sweep (or the task's next attempt) discards the same way.

/** Where the output goes (as for any task output). */
export interface PackageTarget {
  mediaId: string;
  folder: string;
  filename?: string;
}

/** What the head file is when the package first becomes playable. */
export interface PlayableHead {
  text: string;
  facts: FileFacts;
  ref: string | null;
  metadata: Record<string, unknown>;
}

/** Entries stored at once (their fsyncs overlap). */
const PUTS = 8;

export class GrowingPackage {
  readonly fileId = newId('file');
  private readonly key: string;
  private readonly keys: string[];
  private intended = false;
  private playable: FileObject | null = null;
  private ended = false;
  /** Entry name → stored size. */
  private readonly stored = new Map<string, number>();

  constructor(
    private readonly deps: Deps,
    private readonly scope: Scope,
    private readonly target: PackageTarget,
    /** In the transaction that commits the processing row: the task's side (queue/task-state markPlayable). */
    private readonly onPlayable: (trx: Kysely<Database>, file: FileObject) => Promise<unknown>,
  ) {
    this.key = fileBlobKey(scope.projectId, this.fileId);
    this.keys = [this.key, packageKey(this.key)];
  }

  /** Whether anything was stored (the task's end then goes through this package). */
  get started(): boolean {
    return this.intended;
  }

  private async intend(): Promise<void> {
    if (this.intended) return;
    await intendPut(this.deps, this.keys);
    this.intended = true;
  }

  /** Stores one local file under `key` (a hard link or copy, so the producer's file stays). */
  private async putCopy(key: string, from: string, mime: string): Promise<number> {
    const tmp = scratchPath(this.deps, 'pkg');
    await fs.link(from, tmp).catch(() => fs.copyFile(from, tmp));
    try {
      return (await this.deps.blobs.putFile(key, tmp, { contentType: mime })).size;
    } finally {
      await fs.rm(tmp, { force: true });
    }
  }

  private async putText(key: string, text: string, mime: string): Promise<number> {
    const tmp = scratchPath(this.deps, 'pkg');
    await fs.writeFile(tmp, text);
    try {
      return (await this.deps.blobs.putFile(key, tmp, { contentType: mime })).size;
    } finally {
      await fs.rm(tmp, { force: true });
    }
  }

  /**
   * Once playable, the row can be deleted while the task still runs: the task then stops (its
   * discard removes what it stored), and until it does the journal names the package again, since
   * the deletion settled the first entry (a crash in between must not orphan later segments).
   */
  private async stillWanted(): Promise<void> {
    if (!this.playable) return;
    await reassertPut(this.deps, this.keys);
    const row = await this.deps.db.selectFrom('files').select('id').where('id', '=', this.fileId).executeTakeFirst();
    if (!row) throw new AppError('not_found', `the output file ${this.fileId} was deleted while the task ran`);
  }

  /** Stores finished entries of `dir` (segments, init segments), each once: names already stored are skipped. */
  async putFiles(dir: string, names: readonly string[]): Promise<void> {
    const todo = names.filter((n) => !this.stored.has(n));
    if (todo.length === 0) return;
    await this.intend();
    await this.stillWanted();
    for (let at = 0; at < todo.length; at += PUTS) {
      const batch = todo.slice(at, at + PUTS);
      const done = await Promise.allSettled(
        batch.map(async (name) => {
          const size = await this.putCopy(
            packageEntryKey(this.key, name),
            path.join(dir, name),
            packageEntryMime(name),
          );
          this.stored.set(name, size);
        }),
      );
      const failed = done.find((d) => d.status === 'rejected');
      if (failed) throw failed.reason;
    }
  }

  /** Stores (or replaces) a text entry: a playlist as it grows, after the segments it lists. */
  async putEntryText(name: string, text: string): Promise<void> {
    await this.intend();
    this.stored.set(name, await this.putText(packageEntryKey(this.key, name), text, packageEntryMime(name)));
  }

  /** Stores the head and commits the output row as processing, with the file.playable event; once. */
  async publish(head: PlayableHead): Promise<FileObject> {
    if (this.playable) return this.playable;
    await this.intend();
    const headSize = await this.putText(this.key, head.text, head.facts.mime);
    const { deps, scope, target } = this;
    try {
      this.playable = await transact(deps.db, async (trx) => {
        const now = iso(deps.clock.now());
        if (!(await findMedia(trx, scope.projectId, target.mediaId))) throw notFoundMedia(target.mediaId);
        const { file } = await insertFileRow(deps, trx, scope, {
          id: this.fileId,
          mediaId: target.mediaId,
          facts: head.facts,
          size: headSize + this.entryBytes(),
          blobKey: this.key,
          folder: target.folder,
          filename: target.filename ?? `${this.fileId}.${head.facts.extension}`,
          ref: head.ref,
          metadata: head.metadata,
          now,
          status: 'processing',
        });
        await trx.updateTable('media').set({ updated: now }).where('id', '=', target.mediaId).execute();
        await this.onPlayable(trx, file);
        return file;
      });
    } catch (err) {
      throw isUniqueViolation(err) ? this.conflict() : err;
    }
    crashPoint(deps.config, 'package.playable');
    return this.playable;
  }

  private entryBytes(): number {
    let total = 0;
    for (const size of this.stored.values()) total += size;
    return total;
  }

  private conflict() {
    return new AppError(
      'file_conflict',
      'a file already exists at the output folder/filename; choose another filename or folder',
    );
  }

  /**
   * The task's end: the entries not stored yet (and every playlist, now final), then the head;
   * the row (inserted, or the processing one finalised) goes in the caller's transaction.
   */
  async stage(out: OutputFile): Promise<Staged<FileObject[]>> {
    const pkg = out.package;
    if (!pkg) throw new Error('a growing package ends with a package');
    await this.putFiles(
      pkg.dir,
      pkg.entries.filter((e) => !isPlaylistEntry(e.name)).map((e) => e.name),
    );
    for (const e of pkg.entries.filter((x) => isPlaylistEntry(x.name)))
      await this.putEntryText(e.name, await fs.readFile(path.join(pkg.dir, e.name), 'utf8'));
    const headSize = await this.putCopy(this.key, out.path, out.facts.mime);
    crashPoint(this.deps.config, 'blob.put.written');
    const size = headSize + this.entryBytes();
    const { deps, scope, target } = this;
    return {
      insert: async (trx) => {
        const now = iso(deps.clock.now());
        if (!(await findMedia(trx, scope.projectId, target.mediaId))) throw notFoundMedia(target.mediaId);
        let file: FileObject;
        if (this.playable) {
          const row = await trx
            .updateTable('files')
            .set({
              ...factColumns({ facts: out.facts, size, metadata: out.metadata, probe: out.probe }),
              status: 'ready',
              updated: now,
            })
            .where('id', '=', this.fileId)
            .where('status', '=', 'processing')
            .returning(FILE_COLUMNS)
            .executeTakeFirst();
          if (!row) throw new AppError('not_found', `the output file ${this.fileId} was deleted while the task ran`);
          file = toFileObject(deps.config.publicUrl, row);
          await recordEvent(trx, scope.projectId, 'file.created', file, now, scope.chain);
        } else {
          file = (
            await insertFileRow(deps, trx, scope, {
              id: this.fileId,
              mediaId: target.mediaId,
              facts: out.facts,
              probe: out.probe,
              size,
              blobKey: this.key,
              folder: target.folder,
              filename: target.filename ?? `${this.fileId}.${out.facts.extension}`,
              ref: out.ref,
              metadata: out.metadata,
              now,
            })
          ).file;
        }
        await trx.updateTable('media').set({ updated: now }).where('id', '=', target.mediaId).execute();
        await settlePut(trx, this.keys);
        return [file];
      },
      committed: () => {
        this.ended = true;
        crashPoint(deps.config, 'blob.put.committed');
      },
      abandon: async (err) => {
        await this.discard();
        return isUniqueViolation(err) ? this.conflict() : err;
      },
    };
  }

  /** After a failure (or a stop): the processing row and every stored entry go. Idempotent. */
  async discard(): Promise<void> {
    if (this.ended || !this.intended) return;
    this.ended = true;
    if (this.playable) await discardProcessingFile(this.deps, this.scope.projectId, this.fileId);
    await abandonPut(this.deps, this.keys);
  }
}

/**
 * Removes a file row still `processing` (a package whose task stopped) and its blobs, as a
 * deletion does (file.deleted, the journal covering the bytes); a row that is gone or ready stays.
 */
export async function discardProcessingFile(
  deps: Pick<Deps, 'db' | 'blobs' | 'clock' | 'config'>,
  projectId: string,
  fileId: string,
): Promise<void> {
  const keys = await transact(deps.db, async (trx) => {
    const row = await trx
      .selectFrom('files')
      .select([...FILE_COLUMNS, 'blob_key'])
      .where('project_id', '=', projectId)
      .where('id', '=', fileId)
      .where('status', '=', 'processing')
      .executeTakeFirst();
    if (!row) return [];
    const now = iso(deps.clock.now());
    await trx.deleteFrom('files').where('id', '=', fileId).execute();
    await bumpCounter(trx, projectId, 'files', -1);
    await trx.updateTable('media').set({ updated: now }).where('id', '=', row.media_id).execute();
    await recordEvent(trx, projectId, 'file.deleted', toFileObject(deps.config.publicUrl, row), now);
    await intendDelete(trx, rowBlobKeys(row), now);
    return rowBlobKeys(row);
  });
  if (keys.length > 0) await completeDelete(deps, keys);
}

/**
 * Processing rows whose writer has stopped (a crash while the package grew): discarded with their
 * blobs. Run before the blob journal's sweep, which would otherwise keep them as referenced.
 */
export async function sweepAbandonedPackages(
  deps: Pick<Deps, 'db' | 'blobs' | 'clock' | 'config' | 'log'>,
): Promise<number> {
  const now = deps.clock.now();
  const rows = await deps.db
    .selectFrom('blob_journal')
    .innerJoin('files', 'files.blob_key', 'blob_journal.blob_key')
    .select(['files.id', 'files.project_id', 'blob_journal.owner', 'blob_journal.created'])
    .where('files.status', '=', 'processing')
    .execute();
  const gone = rows.filter((r) => writerGone(r.owner, r.created, now));
  for (const r of gone) await discardProcessingFile(deps, r.project_id, r.id);
  if (gone.length > 0) deps.log.info({ files: gone.length }, 'packages whose task stopped while writing them removed');
  return gone.length;
}
