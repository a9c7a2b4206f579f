import type { FilesTable, MediaTable } from '../db/schema.js';

// The resource shapes the API shows (SPEC 2.2, 2.3). Events carry the same shapes. Pure, and free
// of imports but types: the SQLite reader thread renders file pages with them (db/hot-reads.ts).

/** The file columns the API shows; blob_key is selected separately where bytes are touched. */
export const FILE_COLUMNS = [
  'id',
  'project_id',
  'media_id',
  'kind',
  'format',
  'type',
  'width',
  'height',
  'duration',
  'filesize',
  'folder',
  'filename',
  'ref',
  'metadata',
  'status',
  'created',
  'updated',
] as const;

export type FileRow = Pick<
  FilesTable,
  | 'id'
  | 'project_id'
  | 'media_id'
  | 'kind'
  | 'format'
  | 'type'
  | 'width'
  | 'height'
  | 'duration'
  | 'filesize'
  | 'folder'
  | 'filename'
  | 'ref'
  | 'metadata'
  | 'status'
  | 'created'
  | 'updated'
>;
export type MediaRow = MediaTable;

const TIME_BASED = new Set(['video', 'audio']);

// Characters encodeURIComponent leaves as they are: most names need no encoding at all.
const URI_SAFE = /^[A-Za-z0-9\-_.!~*'()]*$/;
const URI_SAFE_PATH = /^[A-Za-z0-9\-_.!~*'()/]*$/;

/** A file's path under its project in a delivery URL: each segment percent-encoded where it needs it. */
export function encodePath(folder: string, filename: string): string {
  const name = URI_SAFE.test(filename) ? filename : encodeURIComponent(filename);
  if (!folder) return name;
  return `${URI_SAFE_PATH.test(folder) ? folder : folder.split('/').map(encodeURIComponent).join('/')}/${name}`;
}

/** The delivery address of a file: /d/<project>/<folder>/<filename> under the public URL. */
export function deliveryUrl(publicUrl: string, projectId: string, folder: string, filename: string): string {
  return `${publicUrl}/d/${projectId}/${encodePath(folder, filename)}`;
}

/** An adaptive_video package with a DASH manifest beside its HLS playlists (`format` of its file). */
export const HLS_DASH_FORMAT = 'hls_dash';

/** Fields shared by standalone and embedded files; measures are omitted where they do not apply. */
function fileCore(publicUrl: string, row: FileRow) {
  const url = deliveryUrl(publicUrl, row.project_id, row.folder, row.filename);
  return {
    id: row.id,
    object: 'source' as const,
    kind: row.kind,
    format: row.format ?? undefined,
    type: row.type,
    width: row.width ?? undefined,
    height: row.height ?? undefined,
    duration: TIME_BASED.has(row.kind) && row.duration !== null ? row.duration : undefined,
    filesize: Number(row.filesize),
    folder: row.folder,
    filename: row.filename,
    url,
    // adaptive_video: the DASH manifest of the package the master playlist (url) heads.
    dash_url: row.format === HLS_DASH_FORMAT ? `${url}.pkg/manifest.mpd` : undefined,
    ref: row.ref ?? undefined,
    created: row.created,
    updated: row.updated,
  };
}

/** Most files carry no metadata; skip parsing the common empty object. */
const parseMetadata = (text: string): Record<string, unknown> =>
  text === '{}' ? {} : (JSON.parse(text) as Record<string, unknown>);

export function toFileObject(publicUrl: string, row: FileRow) {
  // Object.assign, not a spread: spreading this object costs microseconds per file in V8,
  // a fifth of a 20-file list page.
  return Object.assign(fileCore(publicUrl, row), {
    media_id: row.media_id,
    metadata: parseMetadata(row.metadata),
    status: row.status,
  });
}
export type FileObject = ReturnType<typeof toFileObject>;

/** A page of files as the JSON text of their array, rendered where the rows are read. */
export function fileListJson(publicUrl: string, rows: FileRow[]): string {
  return JSON.stringify(rows.map((r) => toFileObject(publicUrl, r)));
}

/** The SQL function through which fileObjectSql encodes a path that needs it (encodePath). */
export const ENCODE_PATH_FUNCTION = 'mediad_encode_path';

/**
 * toFileObject as a SQLite expression: the JSON text of one file, made by SQLite itself from the
 * columns of the read `from` (FILE_COLUMNS); its one `?` is the public URL. The SQLite reader thread
 * renders pages this way: turning 17 columns per row into JavaScript values and those into JSON cost
 * it 93 µs of CPU per page of 20 files, against 64 µs here (bench:api's data, in a loop). Members, their order and their
 * omissions follow toFileObject, and a test holds the two to the same values row by row
 * (test/unit/sqlite-rendering.test.ts). The path is encodePath's, registered on the connection as
 * ENCODE_PATH_FUNCTION: a GLOB for the names that need no encoding cost more than the call.
 */
export function fileObjectSql(from: string): string {
  // Each member as [its text in the format string, the SQL value of its %s]: a member always shown
  // is its name and %s, an optional one a %s whose value is '' or the whole member. One format()
  // builds the object in one buffer; a chain of || copied the growing text once per member.
  const member = (name: string, value: string): [string, string] => [`,"${name}":%s`, value];
  const constant = (text: string): [string, string] => [text, ''];
  const optional = (when: string, name: string, value: string): [string, string] => [
    '%s',
    `iif(${when}, ',"${name}":' || ${value}, '')`,
  ];
  const members = [
    member('id', 'json_quote(id)'),
    constant(',"object":"source"'),
    member('kind', 'json_quote(kind)'),
    optional('format is not null', 'format', 'json_quote(format)'),
    member('type', 'json_quote(type)'),
    optional('width is not null', 'width', 'json_quote(width)'),
    optional('height is not null', 'height', 'json_quote(height)'),
    optional(
      `kind in (${[...TIME_BASED].map((k) => `'${k}'`).join(', ')}) and duration is not null`,
      'duration',
      'json_quote(duration)',
    ),
    member('filesize', 'json_quote(filesize)'),
    member('folder', 'json_quote(folder)'),
    member('filename', 'json_quote(filename)'),
    member('url', 'json_quote(url)'),
    optional(`format = '${HLS_DASH_FORMAT}'`, 'dash_url', `json_quote(url || '.pkg/manifest.mpd')`),
    optional('ref is not null', 'ref', 'json_quote(ref)'),
    member('created', 'json_quote(created)'),
    member('updated', 'json_quote(updated)'),
    member('media_id', 'json_quote(media_id)'),
    member('metadata', 'json(metadata)'),
    member('status', 'json_quote(status)'),
  ];
  const text = `{${members
    .map(([t]) => t)
    .join('')
    .slice(1)}}`;
  const values = members.flatMap(([, v]) => (v ? [v] : []));
  const url = `? || '/d/' || project_id || '/' || ${ENCODE_PATH_FUNCTION}(folder, filename)`;
  // The read runs as a subquery (a co-routine in SQLite's plan) whose rows come out in its ORDER BY's
  // order; the rendering test's pages check that order against the read's own.
  return `select format('${text}', ${values.join(', ')}) from (select *, ${url} as url from (${from}))`;
}

/** A file as the JSON text of its object, or '' when the read found no row; rendered where the row is read. */
export function fileJson(publicUrl: string, rows: FileRow[]): string {
  return rows[0] ? JSON.stringify(toFileObject(publicUrl, rows[0])) : '';
}

/** Files embedded in a media omit media_id and metadata (SPEC 2.3); they carry status, which the SDKs require. */
export function toEmbeddedFile(publicUrl: string, row: FileRow) {
  return Object.assign(fileCore(publicUrl, row), { status: row.status });
}

export function toMediaObject(publicUrl: string, media: MediaRow, files: FileRow[]) {
  const embedded = files.map((f) => toEmbeddedFile(publicUrl, f));
  const urls: Record<string, string> = {};
  // Files come oldest first, so when two files share a ref the newest one wins.
  for (const f of embedded) if (f.ref) urls[f.ref] = f.url;
  // An adaptive package's DASH manifest beside its master playlist: urls.hls_dash next to urls.hls.
  for (const f of embedded) if (f.ref && f.dash_url) urls[`${f.ref}_dash`] = f.dash_url;
  return {
    id: media.id,
    object: 'media' as const,
    kind: media.kind ?? undefined,
    title: media.title ?? undefined,
    alt: media.alt ?? undefined,
    width: media.width ?? undefined,
    height: media.height ?? undefined,
    duration: media.duration ?? undefined,
    files: embedded,
    urls,
    background: media.background ?? undefined,
    metadata: parseMetadata(media.metadata),
    created: media.created,
    updated: media.updated,
  };
}
export type MediaObject = ReturnType<typeof toMediaObject>;
