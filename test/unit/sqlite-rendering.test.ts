import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { migrate, openDatabase } from '../../src/db/connect.js';
import { readFileJson, readFilesPageJson } from '../../src/db/hot-reads.js';
import type { FilesTable } from '../../src/db/schema.js';
import { toFileObject } from '../../src/shapes/files.js';

// The SQLite reader thread renders files with SQL (shapes/files.ts' fileObjectSql), everything else
// with toFileObject. Both must give the same JSON for every row: each member's value and the
// members' order. These rows cover each branch of the shape (optional members present and absent,
// the kinds with a duration, a DASH package, paths that need percent-encoding, metadata) and
// strings that JSON must escape.

const URL = 'https://media.example:8443';
const PROJECT = 'prj_render';

let n = 0;
function row(over: Partial<FilesTable>): FilesTable {
  n++;
  const at = `2026-01-01T00:00:${String(n).padStart(2, '0')}.000Z`;
  return {
    id: `file_${String(n).padStart(16, '0')}`,
    project_id: PROJECT,
    media_id: 'med_0123456789abcdef',
    kind: 'image',
    format: 'png',
    type: 'image/png',
    width: 640,
    height: 480,
    duration: null,
    filesize: 12345,
    folder: '',
    filename: `f${n}.png`,
    ref: 'original',
    metadata: '{}',
    status: 'ready',
    blob_key: `projects/${PROJECT}/files/${n}`,
    probe: null,
    created: at,
    updated: at,
    ...over,
  };
}

const ROWS: FilesTable[] = [
  row({}),
  row({ format: null, width: null, height: null, ref: null }),
  row({ kind: 'video', format: 'mp4', type: 'video/mp4', duration: 12.345678901234567 }),
  row({ kind: 'video', format: 'mp4', type: 'video/mp4', duration: null }),
  row({ kind: 'audio', format: 'mp3', type: 'audio/mpeg', width: null, height: null, duration: 100 }),
  row({ kind: 'image', duration: 3.5 }), // a duration on a kind that shows none
  row({ kind: 'video', format: 'hls_dash', type: 'application/vnd.apple.mpegurl', duration: 0.1 + 0.2 }),
  row({ kind: 'other', format: null, type: 'text/vtt', width: null, height: null, filename: 'captions.vtt' }),
  row({ folder: 'marketing/summer-2026', filename: "a_b-c.d!~*'(x).png" }),
  row({ folder: 'with space/é', filename: 'photo 1.jpg' }),
  row({ folder: '', filename: '100% "quoted" #1?.png' }),
  row({ folder: 'a/b/c', filename: 'naïve résumé.png' }),
  row({ folder: 'ok', filename: 'x+y=z&w.png' }),
  row({ folder: '', filename: 'tab\there\nnewline\u2028sep.png' }),
  row({ ref: 'thumb "small" \\ é', filesize: 0 }),
  row({ metadata: '{"source":"import","batch":49,"tags":["catalog","summer"],"n":1.5,"deep":{"x":null,"y":true}}' }),
  row({ metadata: '{"title":"Été \\"quoted\\" \\u0001 😀","big":1e+21,"small":5e-7}' }),
  row({ status: 'processing', filesize: 9007199254740991 }),
  row({ media_id: 'med_other_media_0', width: 1, height: 1, duration: 0 }),
];

describe('files rendered by SQLite and by toFileObject', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mediad-render-'));
  const database = openDatabase({ dialect: 'sqlite', file: path.join(dir, 'db.sqlite') });
  const { db } = database;
  await migrate(db);
  await db.executeQuery(sql`pragma foreign_keys = off`.compile(db));
  await db.insertInto('files').values(ROWS).execute();
  const onMain = { db, reader: null };
  after(async () => {
    await database.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Each object's member names in order, and the values (parsed), of a JSON text. */
  const shape = (text: string) => {
    const value = JSON.parse(text) as unknown;
    const objects = Array.isArray(value) ? value : [value];
    return { value, order: objects.map((o) => Object.keys(o as object)) };
  };

  it('gives each file the members, order and values of toFileObject', async () => {
    assert.ok(database.reader?.usable, 'the reader thread renders with SQL');
    for (const r of ROWS) {
      const inSql = await readFileJson(database, URL, PROJECT, r.id);
      const inJs = await readFileJson(onMain, URL, PROJECT, r.id);
      assert.equal(inJs, JSON.stringify(toFileObject(URL, r)), 'off the thread: toFileObject itself');
      assert.deepEqual(shape(inSql), shape(inJs), `${r.filename}: ${inSql}`);
    }
    assert.equal(await readFileJson(database, URL, PROJECT, 'file_none'), '');
    assert.equal(await readFileJson(database, URL, 'prj_other', ROWS[0]!.id), '', "another project's file is not read");
  });

  it('gives each page the files of toFileObject, newest first', async () => {
    for (const [limit, offset] of [
      [20, 0],
      [7, 0],
      [7, 7],
      [7, 14],
      [5, 100],
    ] as const) {
      const inSql = await readFilesPageJson(database, URL, PROJECT, limit, offset);
      const inJs = await readFilesPageJson(onMain, URL, PROJECT, limit, offset);
      assert.deepEqual(shape(inSql), shape(inJs), `limit ${limit} offset ${offset}`);
    }
    assert.equal(await readFilesPageJson(database, URL, 'prj_none', 20, 0), '[]');
  });

  it('encodes each path as the JavaScript shape does, and leaves safe ones as they are', async () => {
    const page = JSON.parse(await readFilesPageJson(database, URL, PROJECT, 100, 0)) as { url: string }[];
    const urls = page.map((f) => f.url);
    assert.ok(urls.includes(`${URL}/d/${PROJECT}/with%20space/%C3%A9/photo%201.jpg`), urls.join('\n'));
    assert.ok(urls.includes(`${URL}/d/${PROJECT}/marketing/summer-2026/a_b-c.d!~*'(x).png`));
    assert.ok(urls.includes(`${URL}/d/${PROJECT}/100%25%20%22quoted%22%20%231%3F.png`));
  });
});
