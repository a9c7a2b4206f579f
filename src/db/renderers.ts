import type { PageRequest } from './paginate.js';
import { fileJson, fileListJson, fileObjectSql, type FileRow } from '../shapes/files.js';

// The closed table of renderers: pure functions from a hot read's rows to the JSON text the API
// shows, run where the rows are read. The SQLite reader thread imports this module statically
// (reader-thread.ts) and a read names its renderer by key, so nothing is imported by URL at run
// time. What this module imports is loaded on the thread too: keep it to shapes/.
export const RENDERERS = {
  /** A page of files (GET /files): arg is the public URL. */
  fileList: fileListJson,
  /** One file (GET /files/{id}), '' when there is none: arg is the public URL. */
  file: fileJson,
} as const;

export type RendererName = keyof typeof RENDERERS;

/** A renderer SQLite runs itself: the SELECT of one element's JSON text per row of a read, and the reply made of them. */
export interface SqlRenderer {
  /** A SELECT over the read `from` whose first `?` is the renderer's arg; one text column. */
  readonly select: (from: string) => string;
  readonly combine: (texts: string[]) => string;
}

/**
 * The renderers above as SQL, for the SQLite reader thread: the same JSON (test/unit/sqlite-rendering.test.ts
 * holds each to its JavaScript twin), made without turning every column of every row into a
 * JavaScript value first. PostgreSQL and a read without the thread use RENDERERS.
 */
export const SQL_RENDERERS: { readonly [N in RendererName]?: SqlRenderer } = {
  fileList: { select: fileObjectSql, combine: (texts) => `[${texts.join(',')}]` },
  file: { select: fileObjectSql, combine: (texts) => texts[0] ?? '' },
};

/** A renderer by name, with the types of its rows and argument (for compiledOnce's `rendered`). */
export interface Renderer<R, Arg> {
  readonly name: RendererName;
  readonly render: (arg: Arg, rows: R[]) => string;
}

export const FILE_LIST: Renderer<FileRow, string> = { name: 'fileList', render: RENDERERS.fileList };
export const FILE: Renderer<FileRow, string> = { name: 'file', render: RENDERERS.file };

/**
 * JSON text standing for a T, made by a renderer: an envelope's data that the API writes as it is
 * (http/json-text.ts; only routes marked nativeJson can send it).
 */
export class JsonText<T> {
  declare private readonly shape: T;
  constructor(readonly text: string) {}
}

/** A page whose items were rendered as JSON text where they were read. */
export interface RenderedPage<T> extends PageRequest {
  items: JsonText<T[]>;
  total: number;
}
