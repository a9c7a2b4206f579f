// 100,000 media and files rows straight into a mediad SQLite file, for the API benchmarks.
import Database from 'better-sqlite3';
import { newId } from '../src/ids.js';
import { fileBlobKey } from '../src/storage/keys.js';

export const FILES = 100_000;

const KINDS = [
  { kind: 'image', format: 'jpeg', type: 'image/jpeg', ext: 'jpg', w: 4000, h: 3000, d: null },
  { kind: 'image', format: 'png', type: 'image/png', ext: 'png', w: 1200, h: 800, d: null },
  { kind: 'image', format: 'webp', type: 'image/webp', ext: 'webp', w: 1920, h: 1080, d: null },
  { kind: 'video', format: 'mp4', type: 'video/mp4', ext: 'mp4', w: 1920, h: 1080, d: 93.44 },
  { kind: 'audio', format: 'mp3', type: 'audio/mpeg', ext: 'mp3', w: null, h: null, d: 215.3 },
] as const;
const FOLDERS = ['', 'uploads', 'uploads/2024/06', 'products/shoes', 'marketing/campaign-summer'];

/** 100,000 media + files rows and their exact counters, straight into SQLite in one transaction. */
export function seedFiles(dbFile: string, projectId: string): { sampleId: string; ms: number } {
  const started = performance.now();
  const db = new Database(dbFile);
  db.pragma('journal_mode = WAL');
  // Columns are taken from the live schema, so the seed follows migrations that add nullable columns.
  const insert = (table: string, sample: Record<string, unknown>) => {
    const have = new Set((db.prepare(`pragma table_info(${table})`).all() as { name: string }[]).map((c) => c.name));
    const cols = Object.keys(sample).filter((c) => have.has(c));
    const stmt = db.prepare(`insert into ${table} (${cols.join(', ')}) values (${cols.map(() => '?').join(', ')})`);
    return (row: Record<string, unknown>) => stmt.run(...cols.map((c) => row[c]));
  };
  const mediaRow = (i: number, id: string, k: (typeof KINDS)[number], created: string) => ({
    id,
    project_id: projectId,
    kind: k.kind,
    title: `Asset ${i}`,
    alt: null,
    width: k.w,
    height: k.h,
    duration: k.d,
    background: `#${(((i * 2654435761) >>> 8) & 0xffffff).toString(16).padStart(6, '0')}`,
    metadata: '{}',
    created,
    updated: created,
  });
  const fileRow = (i: number, id: string, mediaId: string, k: (typeof KINDS)[number], created: string) => ({
    id,
    project_id: projectId,
    media_id: mediaId,
    kind: k.kind,
    format: k.format,
    type: k.type,
    width: k.w,
    height: k.h,
    duration: k.d,
    filesize: 50_000 + ((i * 7919) % 9_000_000),
    folder: FOLDERS[i % FOLDERS.length],
    filename: `asset-${String(i).padStart(6, '0')}.${k.ext}`,
    ref: 'original',
    metadata: i % 3 === 0 ? JSON.stringify({ source: 'import', batch: i % 50, tags: ['catalog', 'summer'] }) : '{}',
    status: 'ready',
    blob_key: fileBlobKey(projectId, id),
    probe: JSON.stringify({
      kind: k.kind,
      format: k.format,
      extension: k.ext,
      mime: k.type,
      width: k.w ?? undefined,
      height: k.h ?? undefined,
      duration: k.d ?? undefined,
      hasVideo: k.kind === 'video',
      hasAudio: k.kind !== 'image',
    }),
    created,
    updated: created,
  });
  const k0 = KINDS[0];
  const media = insert('media', mediaRow(0, 'med_x', k0, ''));
  const file = insert('files', fileRow(0, 'file_x', 'med_x', k0, ''));
  const counter = db.prepare(`insert into counters (project_id, resource, count) values (?, ?, ?)
    on conflict (project_id, resource) do update set count = excluded.count`);
  const start = Date.parse('2024-01-01T00:00:00.000Z');
  let sampleId = '';
  db.transaction(() => {
    for (let i = 0; i < FILES; i++) {
      const k = KINDS[i % KINDS.length]!;
      const created = new Date(start + i * 311_000 + (i % 997)).toISOString();
      const mediaId = newId('media');
      const fileId = newId('file');
      if (i === FILES / 2) sampleId = fileId;
      media(mediaRow(i, mediaId, k, created));
      file(fileRow(i, fileId, mediaId, k, created));
    }
    counter.run(projectId, 'files', FILES);
    counter.run(projectId, 'media', FILES);
  })();
  const count = (db.prepare('select count(*) as n from files where project_id = ?').get(projectId) as { n: number }).n;
  db.close();
  if (count !== FILES) throw new Error(`seeded ${count} files, expected ${FILES}`);
  return { sampleId, ms: performance.now() - started };
}
