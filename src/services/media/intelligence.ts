import { SqliteAdapter, type Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Database } from '../../db/schema.js';
import { recordEvent } from '../../events/record.js';
import type { Chain } from '../../shapes/events.js';
import { toMediaObject, type FileRow } from '../../shapes/files.js';
import { mediaFiles } from './media.js';

// What the intelligence kinds need from the project's data: an earlier speech result of the same
// file (so subtitles do not transcribe twice), and summaries of results written into the media's
// metadata for conditions.

/** Largest stored speech document read back (a 4-hour transcript with word times is a few MB). */
const MAX_SPEECH_DOCUMENT_BYTES = 64 * 1024 * 1024;

/**
 * The newest speech document made from `file` that still exists: speech outputs live in the same
 * media and name their source in their metadata (`source_file_id`), so the media's files index
 * finds them.
 */
export async function storedSpeechDocument(deps: Pick<Deps, 'db' | 'blobs'>, file: FileRow): Promise<unknown> {
  const rows = await deps.db
    .selectFrom('files')
    .select(['metadata', 'blob_key', 'filesize'])
    .where('media_id', '=', file.media_id)
    .where('kind', '=', 'speech')
    .orderBy('created', 'desc')
    .orderBy('id', 'desc')
    .execute();
  for (const row of rows) {
    const meta: unknown = JSON.parse(row.metadata);
    const source = meta && typeof meta === 'object' && 'source_file_id' in meta ? meta.source_file_id : undefined;
    if (source !== file.id || Number(row.filesize) > MAX_SPEECH_DOCUMENT_BYTES) continue;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of await deps.blobs.read(row.blob_key)) chunks.push(Buffer.from(chunk));
      return JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      // deleted meanwhile, or not JSON: transcribe again
    }
  }
  return null;
}

/**
 * `metadata[key] = value` on a media, in the caller's transaction (a task's completion), with a
 * media.updated event carrying the task's automation chain. The row is locked first on
 * PostgreSQL so a concurrent PATCH is not lost; SQLite's write lock already serialises it.
 */
export async function annotateMedia(
  deps: Pick<Deps, 'config'>,
  trx: Kysely<Database>,
  scope: { projectId: string; chain?: Chain },
  mediaId: string,
  annotation: { key: string; value: Record<string, unknown> },
  now: string,
): Promise<void> {
  let q = trx.selectFrom('media').selectAll().where('project_id', '=', scope.projectId).where('id', '=', mediaId);
  if (!(trx.getExecutor().adapter instanceof SqliteAdapter)) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  if (!row) return; // deleted while the task ran: its outputs' insert already failed or went with it
  const metadata = { ...(JSON.parse(row.metadata) as Record<string, unknown>), [annotation.key]: annotation.value };
  const updated = { ...row, metadata: JSON.stringify(metadata), updated: now };
  await trx.updateTable('media').set({ metadata: updated.metadata, updated: now }).where('id', '=', mediaId).execute();
  const files = await mediaFiles(trx, [mediaId]);
  const media = toMediaObject(deps.config.publicUrl, updated, files.get(mediaId) ?? []);
  await recordEvent(trx, scope.projectId, 'media.updated', media, now, scope.chain);
}
