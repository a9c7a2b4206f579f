import { sql } from 'kysely';
import { FILE_COLUMNS, type FileRow } from '../shapes/files.js';
import { compiledOnce, perLimit, type ReadHandle } from './compiled.js';
import { FILE, FILE_LIST } from './renderers.js';

// The hot reads, all in one closed table: each compiled once and run on the SQLite reader thread
// where there is one (compiled.ts, reader.ts), rendered to JSON there by the renderers of
// renderers.ts. GET /files/{id}, GET /files and every list's total go through here.

const fileById = compiledOnce(
  (db, projectId: string, id: string) =>
    db
      .selectFrom('files')
      .select([...FILE_COLUMNS, 'blob_key', 'probe'])
      .where('project_id', '=', projectId)
      .where('id', '=', id),
  2,
);

// The API's file: its columns only, rendered on the thread (GET /files/{id}).
const fileObjectById = compiledOnce(
  (db, projectId: string, id: string) =>
    db.selectFrom('files').select(FILE_COLUMNS).where('project_id', '=', projectId).where('id', '=', id),
  2,
);

const filesPage = perLimit((limit) =>
  compiledOnce(
    (db, projectId: string, offset: number) =>
      db
        .selectFrom('files')
        .select(FILE_COLUMNS)
        .where('project_id', '=', projectId)
        .orderBy('created', 'desc')
        .orderBy('id', 'desc')
        .limit(sql.lit(limit))
        .offset(offset),
    2,
  ),
);

const counterRow = compiledOnce(
  (db, projectId: string, resource: string) =>
    db.selectFrom('counters').select('count').where('project_id', '=', projectId).where('resource', '=', resource),
  2,
);

export type CountedResource = 'files' | 'media' | 'tasks' | 'automations';

/** A file of the project with its blob key and probe, or undefined. */
export async function readFile(h: ReadHandle, projectId: string, id: string) {
  return (await fileById(h, projectId, id))[0];
}

/** A file of the project as the JSON text of its API object, or '' when there is none. */
export function readFileJson(h: ReadHandle, publicUrl: string, projectId: string, id: string): Promise<string> {
  return fileObjectById.rendered(h, FILE, publicUrl, projectId, id);
}

/** A page of the project's files (newest first) as the JSON text of their array. */
export function readFilesPageJson(
  h: ReadHandle,
  publicUrl: string,
  projectId: string,
  limit: number,
  offset: number,
): Promise<string> {
  return filesPage(limit).rendered(h, FILE_LIST, publicUrl, projectId, offset);
}

/** A project's exact count of a resource (db/queries/counters.ts keeps it). */
export async function readCounter(h: ReadHandle, projectId: string, resource: CountedResource): Promise<number> {
  const [row] = await counterRow(h, projectId, resource);
  return row ? Number(row.count) : 0;
}

export type { FileRow };
