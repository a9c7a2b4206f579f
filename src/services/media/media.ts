import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { iso } from '../../deps.js';
import { AppError } from '../../errors.js';
import { newId } from '../../ids.js';
import type { Database, TaskStatus } from '../../db/schema.js';
import { compiledTemplate } from '../../db/compiled.js';
import { bumpCounter } from '../../db/queries/counters.js';
import { readCounter } from '../../db/hot-reads.js';
import { listPage, type Page, type PageRequest } from '../../db/paginate.js';
import { transact } from '../../db/transact.js';
import { recordEvent } from '../../events/record.js';
import {
  FILE_COLUMNS,
  toFileObject,
  toMediaObject,
  type FileRow,
  type MediaObject,
  type MediaRow,
} from '../../shapes/files.js';
import { completeDelete, intendDelete, rowBlobKeys } from './blob-journal.js';
import { dropOrphanDerivatives } from './image-url-cache.js';
import { normalizeFolder } from './paths.js';

type Scope = { projectId: string };

/** Compiled once (db/compiled.ts): every task's completion and every automation run reads its media. */
const mediaById = compiledTemplate(
  (db: Kysely<Database>, projectId: string, id: string) =>
    db.selectFrom('media').selectAll().where('project_id', '=', projectId).where('id', '=', id),
  2,
);

export async function findMedia(db: Kysely<Database>, projectId: string, id: string): Promise<MediaRow | undefined> {
  return (await db.executeQuery(mediaById(db, projectId, id))).rows[0];
}

/** Files of several media in one query, oldest first, grouped by media id. */
export async function mediaFiles(db: Kysely<Database>, mediaIds: string[]): Promise<Map<string, FileRow[]>> {
  const byMedia = new Map<string, FileRow[]>(mediaIds.map((id) => [id, []]));
  if (mediaIds.length === 0) return byMedia;
  const rows = await db
    .selectFrom('files')
    .select(FILE_COLUMNS)
    .where('media_id', 'in', mediaIds)
    .orderBy('created')
    .orderBy('id')
    .execute();
  for (const r of rows) byMedia.get(r.media_id)?.push(r);
  return byMedia;
}

const notFound = (id: string) => new AppError('not_found', `no media ${id} in this project`);

async function present(deps: Deps, db: Kysely<Database>, row: MediaRow): Promise<MediaObject> {
  const files = await mediaFiles(db, [row.id]);
  return toMediaObject(deps.config.publicUrl, row, files.get(row.id) ?? []);
}

export interface MediaInput {
  title?: string | null;
  alt?: string | null;
  metadata?: Record<string, unknown>;
}

/** POST /media: an empty media that files are attached to later (POST /files with media_id). */
export async function createMedia(deps: Deps, scope: Scope, input: MediaInput): Promise<MediaObject> {
  return transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    const row: MediaRow = {
      id: newId('media'),
      project_id: scope.projectId,
      kind: null,
      title: input.title ?? null,
      alt: input.alt ?? null,
      width: null,
      height: null,
      duration: null,
      background: null,
      metadata: JSON.stringify(input.metadata ?? {}),
      created: now,
      updated: now,
    };
    await trx.insertInto('media').values(row).execute();
    await bumpCounter(trx, scope.projectId, 'media', 1);
    const media = toMediaObject(deps.config.publicUrl, row, []);
    await recordEvent(trx, scope.projectId, 'media.created', media, now);
    return media;
  });
}

export async function getMedia(deps: Deps, scope: Scope, id: string): Promise<MediaObject> {
  const row = await findMedia(deps.db, scope.projectId, id);
  if (!row) throw notFound(id);
  return present(deps, deps.db, row);
}

/** GET /media's filters (all optional; together they narrow). */
export interface MediaFilter {
  kind?: string;
  /** Media with a file in this folder or below it. */
  folder?: string;
  /** Media with a file of this ref ("original", "thumbnail", …). */
  ref?: string;
  /** processing: a task on one of its files is running or waiting; failed: one failed; ready: neither, and it has files. */
  status?: 'ready' | 'processing' | 'failed';
  created_after?: string;
  created_before?: string;
  /** Words of the title or of a file's name, or an id (med_…, file_…). */
  q?: string;
}

const ACTIVE_TASK: TaskStatus[] = ['pending', 'processing', 'waiting'];
/** Case-insensitive "contains" on both dialects (SQLite has no default LIKE escape, so it is named). */
function contains(column: 'media.title' | 'files.filename', text: string) {
  const pattern = `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;
}

type Eb = ExpressionBuilder<Database, 'media'>;

function filterMedia(db: Kysely<Database>, projectId: string, f: MediaFilter) {
  let q = db.selectFrom('media').where('media.project_id', '=', projectId);
  if (f.kind) q = q.where('media.kind', '=', f.kind);
  if (f.created_after) q = q.where('media.created', '>', iso(new Date(f.created_after)));
  if (f.created_before) q = q.where('media.created', '<', iso(new Date(f.created_before)));
  // Correlated subqueries are built from the callback's builder, which knows the outer `media`.
  const files = (eb: Eb) => eb.selectFrom('files').select('files.id').whereRef('files.media_id', '=', 'media.id');
  const tasksOn = (eb: Eb, statuses: TaskStatus[]) =>
    eb
      .selectFrom('tasks')
      .innerJoin('files', 'files.id', 'tasks.input_file_id')
      .select('tasks.id')
      .where('tasks.project_id', '=', projectId)
      .whereRef('files.media_id', '=', 'media.id')
      .where('tasks.status', 'in', statuses);
  if (f.folder !== undefined) {
    const folder = normalizeFolder(f.folder);
    if (folder !== '')
      q = q.where((eb) =>
        eb.exists(
          files(eb).where((e) => e.or([e('files.folder', '=', folder), e('files.folder', 'like', `${folder}/%`)])),
        ),
      );
  }
  const ref = f.ref;
  if (ref) q = q.where((eb) => eb.exists(files(eb).where('files.ref', '=', ref)));
  if (f.status === 'processing') q = q.where((eb) => eb.exists(tasksOn(eb, ACTIVE_TASK)));
  else if (f.status === 'failed') q = q.where((eb) => eb.exists(tasksOn(eb, ['failed'])));
  else if (f.status === 'ready')
    q = q.where((eb) => eb.and([eb.exists(files(eb)), eb.not(eb.exists(tasksOn(eb, [...ACTIVE_TASK, 'failed'])))]));
  const text = f.q?.trim();
  if (text) {
    q = q.where((eb) =>
      eb.or([
        eb('media.id', '=', text),
        contains('media.title', text),
        eb.exists(files(eb).where((e) => e.or([e('files.id', '=', text), contains('files.filename', text)]))),
      ]),
    );
  }
  return q;
}

export async function listMedia(
  deps: Deps,
  scope: Scope,
  request: PageRequest,
  filter: MediaFilter = {},
): Promise<Page<MediaObject>> {
  const filtered = Object.values(filter).some((v) => v !== undefined);
  const page = await listPage(
    filterMedia(deps.db, scope.projectId, filter),
    (q) => q.selectAll('media').orderBy('media.created', 'desc').orderBy('media.id', 'desc'),
    request,
    filtered ? undefined : readCounter(deps, scope.projectId, 'media'),
  );
  const files = await mediaFiles(
    deps.db,
    page.items.map((r) => r.id),
  );
  return { ...page, items: page.items.map((r) => toMediaObject(deps.config.publicUrl, r, files.get(r.id) ?? [])) };
}

/** PATCH /media/{id}: only the properties sent change; `updated` moves. */
export async function updateMedia(deps: Deps, scope: Scope, id: string, patch: MediaInput): Promise<MediaObject> {
  return transact(deps.db, async (trx) => {
    const now = iso(deps.clock.now());
    const changes: Partial<MediaRow> = { updated: now };
    if (patch.title !== undefined) changes.title = patch.title;
    if (patch.alt !== undefined) changes.alt = patch.alt;
    if (patch.metadata !== undefined) changes.metadata = JSON.stringify(patch.metadata);
    const row = await trx
      .updateTable('media')
      .set(changes)
      .where('project_id', '=', scope.projectId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound(id);
    const media = await present(deps, trx, row);
    await recordEvent(trx, scope.projectId, 'media.updated', media, now);
    return media;
  });
}

/** DELETE /media/{id}: the media and all its files; rows first, then bytes. */
export async function deleteMedia(deps: Deps, scope: Scope, id: string): Promise<void> {
  const blobKeys = await transact(deps.db, async (trx) => {
    const row = await findMedia(trx, scope.projectId, id);
    if (!row) throw notFound(id);
    const now = iso(deps.clock.now());
    const files = await trx
      .selectFrom('files')
      .select([...FILE_COLUMNS, 'blob_key'])
      .where('media_id', '=', id)
      .execute();
    for (const f of files)
      await recordEvent(trx, scope.projectId, 'file.deleted', toFileObject(deps.config.publicUrl, f), now);
    await recordEvent(trx, scope.projectId, 'media.deleted', toMediaObject(deps.config.publicUrl, row, files), now);
    await trx.deleteFrom('files').where('media_id', '=', id).execute();
    await trx.deleteFrom('media').where('id', '=', id).execute();
    await bumpCounter(trx, scope.projectId, 'files', -files.length);
    await bumpCounter(trx, scope.projectId, 'media', -1);
    await intendDelete(trx, files.flatMap(rowBlobKeys), now);
    return files.flatMap(rowBlobKeys);
  });
  await completeDelete(deps, blobKeys);
  await dropOrphanDerivatives(deps, scope.projectId); // image URLs' cached results (issue 24)
}
