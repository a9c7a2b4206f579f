import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { masterVariants, playlistUris } from '../../src/media/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';

// Playable early: a 60 s source's package plays (master, media playlist, a first segment decoded
// by FFmpeg, over HTTPS) while its task still runs; the output row is `processing` until the task
// ends. A task stopped mid-way, or a source that fails to decode mid-way, leaves no file and no blob.

const run = promisify(execFile);
let t: TestServer;
let key: string;
let projectId: string;
let dir: string;
let long: any;
let broken: any;
const TASK = { kind: 'adaptive_video', segment_seconds: 2, ladder: [{ height: 360 }, { height: 240 }] };

async function upload(local: string, name: string) {
  const res = await request(`${t.base}/d/${projectId}/src/${name}`, {
    method: 'PUT',
    body: await fs.readFile(local),
    headers: { authorization: `Bearer ${key}` },
    dispatcher: t.agent,
  });
  const json: any = await res.body.json();
  assert.equal(res.statusCode, 201, JSON.stringify(json));
  return json.data;
}

async function get(url: string) {
  const res = await request(url, { dispatcher: t.agent });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body, text: body.toString('utf8') };
}

/** Package blobs on disk (every entry lives under `<file key>.pkg/`; an emptied directory is no blob). */
async function packageBlobs(): Promise<string[]> {
  const root = path.join(t.dataDir, 'blobs', 'projects');
  const all = await fs.readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return all
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .filter((p) => p.includes('.pkg/'))
    .sort();
}

/** Polls the task until its package is playable (or it ended). */
async function untilPlayable(id: string): Promise<any> {
  for (let i = 0; i < 1200; i++) {
    const task = (await t.call('GET', `/tasks/${id}`, { key })).json.data;
    if (task.playable_at || ['completed', 'failed', 'cancelled'].includes(task.status)) return task;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`task ${id} never became playable`);
}

before(async () => {
  t = await startTestServer({ MEDIAD_WORKER_CONCURRENCY: '1' });
  const k = await t.key('adaptive-early', 'main');
  key = k.key;
  projectId = k.project_id;
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-adaptive-early-'));
  const src = path.join(dir, 'long.mp4');
  await run('ffmpeg', [
    ...['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25:duration=60'],
    ...['-f', 'lavfi', '-i', 'sine=frequency=440:duration=60', '-c:v', 'libx264', '-preset', 'ultrafast'],
    ...['-c:a', 'aac', '-movflags', '+faststart', '-shortest', src],
  ]);
  // Byte surgery: the second half of the media data overwritten with noise. The header (moov,
  // first: faststart) stays intact, so the upload probes fine and the task starts; decoding fails
  // past the middle.
  const bytes = await fs.readFile(src);
  const noise = Buffer.alloc(Math.floor(bytes.length / 4));
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
  noise.copy(bytes, Math.floor(bytes.length / 2));
  const bad = path.join(dir, 'broken.mp4');
  await fs.writeFile(bad, bytes);
  [long, broken] = [await upload(src, 'long.mp4'), await upload(bad, 'broken.mp4')];
});
after(async () => {
  await t.stop();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('adaptive_video: playable early', () => {
  it('the master plays and a first segment decodes over HTTPS while the task still runs', async () => {
    const created = await t.call('POST', '/tasks', { key, body: { ...TASK, file_id: long.id } });
    assert.equal(created.status, 201, created.text);
    const early = await untilPlayable(created.json.data.id);
    assert.equal(early.status, 'processing', `playable before the end: ${JSON.stringify(early)}`);
    assert.ok(early.progress < 100);
    assert.ok(early.output?.id, 'the output is known once playable');
    const file = (await t.call('GET', `/files/${early.output.id}`, { key })).json.data;
    assert.equal(file.status, 'processing');

    const master = await get(early.output.url);
    assert.equal(master.status, 200);
    assert.match(String(master.headers['cache-control']), /no-cache/);
    const variants = masterVariants(master.text);
    assert.equal(variants.length, 2, master.text);
    const media = await get(new URL(variants.at(-1)!.uri, early.output.url).toString());
    assert.equal(media.status, 200);
    assert.match(media.text, /#EXT-X-PLAYLIST-TYPE:EVENT/);
    assert.doesNotMatch(media.text, /#EXT-X-ENDLIST/, 'still growing');
    const [init, first] = playlistUris(media.text);
    const mediaUrl = new URL(variants.at(-1)!.uri, early.output.url);
    const parts = await Promise.all([init!, first!].map((u) => get(new URL(u, mediaUrl).toString())));
    for (const p of parts) assert.equal(p.status, 200);
    const local = path.join(dir, 'first.mp4');
    await fs.writeFile(local, Buffer.concat(parts.map((p) => p.body)));
    const decoded = await run('ffmpeg', ['-v', 'error', '-xerror', '-i', local, '-f', 'null', '-']);
    assert.equal(decoded.stderr, '', 'the first segment decodes without an error');
    const still = (await t.call('GET', `/tasks/${early.id}`, { key })).json.data;
    assert.equal(still.status, 'processing', 'all that happened while the task ran');

    const done = await waitForTask(t, key, early.id, undefined, 300_000);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal(done.output.id, early.output.id, 'the playable file is the output');
    assert.equal(done.playable_at, early.playable_at);
    assert.ok(Date.parse(done.playable_at) < Date.parse(done.finished));
    const ready = (await t.call('GET', `/files/${done.output.id}`, { key })).json.data;
    assert.equal(ready.status, 'ready');
    assert.ok(Math.abs(ready.duration - 60) < 0.3, String(ready.duration));
    const final = await get(new URL(variants.at(-1)!.uri, early.output.url).toString());
    assert.match(final.text, /#EXT-X-PLAYLIST-TYPE:VOD/);
    assert.match(final.text, /#EXT-X-ENDLIST/);

    // file.playable when it became playable, file.created when it was complete.
    const events = (await t.call('GET', '/events?limit=100', { key })).json.data.filter(
      (e: any) => e.data?.id === done.output.id,
    );
    const types = events.map((e: any) => e.type);
    assert.ok(types.includes('file.playable'), types.join());
    assert.ok(types.includes('file.created'), types.join());
    const playable = events.find((e: any) => e.type === 'file.playable');
    assert.equal(playable.data.status, 'processing');
  });

  it('a task cancelled while its package plays leaves no file and no segment', async () => {
    const before = await packageBlobs();
    const created = await t.call('POST', '/tasks', { key, body: { ...TASK, file_id: long.id } });
    const early = await untilPlayable(created.json.data.id);
    assert.equal(early.status, 'processing', JSON.stringify(early));
    assert.ok((await packageBlobs()).length > before.length, 'segments were stored while it ran');
    const cancelled = await t.call('POST', `/tasks/${early.id}/cancel`, { key });
    assert.equal(cancelled.status, 200, cancelled.text);
    for (let i = 0; i < 200; i++) {
      const gone = (await t.call('GET', `/files/${early.output.id}`, { key })).status === 404;
      if (gone && (await packageBlobs()).length === before.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal((await t.call('GET', `/files/${early.output.id}`, { key })).status, 404);
    assert.deepEqual(await packageBlobs(), before, 'no blob of the stopped package is left');
    assert.equal((await get(early.output.url)).status, 404);
    const task = (await t.call('GET', `/tasks/${early.id}`, { key })).json.data;
    assert.equal(task.status, 'cancelled');
    assert.equal(task.output, null);
  });

  it('a package file deleted while it plays stops its task, which leaves no segment', async () => {
    const before = await packageBlobs();
    const created = await t.call('POST', '/tasks', { key, body: { ...TASK, file_id: long.id } });
    const early = await untilPlayable(created.json.data.id);
    assert.equal(early.status, 'processing', JSON.stringify(early));
    const deleted = await t.call('DELETE', `/files/${early.output.id}`, { key });
    assert.equal(deleted.status, 200, deleted.text);
    const done = await waitForTask(t, key, early.id, undefined, 300_000);
    assert.equal(done.status, 'failed', JSON.stringify(done));
    assert.equal(done.error_code, 'not_found');
    assert.match(done.error, /deleted while the task ran/);
    assert.ok(done.progress < 60, `stopped soon after the deletion, not at the end of the encode: ${done.progress}`);
    assert.deepEqual(await packageBlobs(), before, 'no segment stored after the deletion is left');
  });

  it('a source that fails to decode mid-way fails the task with FFmpeg’s reason; nothing is left', async () => {
    const before = await packageBlobs();
    const created = await t.call('POST', '/tasks', { key, body: { ...TASK, file_id: broken.id } });
    assert.equal(created.status, 201, created.text);
    const done = await waitForTask(t, key, created.json.data.id, undefined, 300_000);
    assert.equal(done.status, 'failed');
    assert.equal(done.error_code, 'transform_failed');
    assert.match(done.error, /^ffmpeg failed: .+/);
    assert.equal(done.output, null);
    const media = (await t.call('GET', `/media/${broken.media_id}`, { key })).json.data;
    assert.deepEqual(
      media.files.filter((f: any) => f.type.startsWith('application/vnd.apple.mpegurl')),
      [],
      'no package file',
    );
    assert.deepEqual(await packageBlobs(), before, 'no segment left');
  });

  it('an output path that is taken stops the encode as soon as the package would become playable', async () => {
    const before = await packageBlobs();
    const created = await t.call('POST', '/tasks', {
      key,
      body: { ...TASK, file_id: long.id, filename: long.filename },
    });
    assert.equal(created.status, 201, created.text);
    const done = await waitForTask(t, key, created.json.data.id, undefined, 300_000);
    assert.equal(done.status, 'failed');
    assert.equal(done.error_code, 'file_conflict');
    assert.ok(done.progress < 50, `FFmpeg was stopped early (progress ${done.progress})`);
    assert.deepEqual(await packageBlobs(), before, 'no segment left');
  });
});
