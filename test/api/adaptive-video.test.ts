import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { masterVariants, playlistUris, segmentDurations } from '../../src/media/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitForTask } from '../helpers/tasks.js';

// adaptive_video end to end with real FFmpeg: a 3 s 640x360 source with audio becomes a 360/240
// ladder of CMAF segments; the package is read back over HTTPS by FFmpeg itself (HLS and DASH),
// with signed delivery, project scoping, deletion and bad options.

const run = promisify(execFile);
let t: TestServer;
let key: string;
let projectId: string;
let dir: string;
let source: any;
let silent: any;
let audioOnly: any;
let pkg: { task: any; file: any };
const SEGMENT = 1;

async function upload(local: string, name: string) {
  const body = await fs.readFile(local);
  const res = await request(`${t.base}/d/${projectId}/src/${name}`, {
    method: 'PUT',
    body,
    headers: { authorization: `Bearer ${key}` },
    dispatcher: t.agent,
  });
  const json: any = await res.body.json();
  assert.equal(res.statusCode, 201, JSON.stringify(json));
  return json.data;
}

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await request(url, { dispatcher: t.agent, headers });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body, text: body.toString('utf8') };
}

/** ffprobe over HTTPS (the test server's self-signed certificate: FFmpeg does not verify by default). */
async function ffprobe(url: string, args: string[]): Promise<any> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-of', 'json', ...args, url], { maxBuffer: 64 << 20 });
  return JSON.parse(stdout);
}

/** Keyframe times (seconds) of the video of a playlist, read through the HLS demuxer. */
async function keyframeTimes(url: string): Promise<number[]> {
  const out = await ffprobe(url, ['-select_streams', 'v:0', '-show_entries', 'packet=pts_time,flags']);
  return out.packets
    .filter((p: any) => p.flags.startsWith('K'))
    .map((p: any) => Math.round(Number(p.pts_time) * 100) / 100);
}

before(async () => {
  t = await startTestServer({ MEDIAD_WORKER_CONCURRENCY: '2' });
  const k = await t.key('adaptive', 'main');
  key = k.key;
  projectId = k.project_id;
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-adaptive-'));
  const src = path.join(dir, 'clip.mp4');
  const mute = path.join(dir, 'mute.mp4');
  const wav = path.join(dir, 'tone.wav');
  await Promise.all([
    run('ffmpeg', [
      ...['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=30:duration=3'],
      ...['-f', 'lavfi', '-i', 'sine=frequency=440:duration=3', '-c:v', 'libx264', '-preset', 'ultrafast'],
      ...['-c:a', 'aac', '-shortest', src],
    ]),
    run('ffmpeg', [
      ...['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=25:duration=2'],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', mute],
    ]),
    run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'sine=duration=1', wav]),
  ]);
  [source, silent, audioOnly] = await Promise.all([
    upload(src, 'clip.mp4'),
    upload(mute, 'mute.mp4'),
    upload(wav, 'tone.wav'),
  ]);
  const created = await t.call('POST', '/tasks', {
    key,
    body: { kind: 'adaptive_video', file_id: source.id, segment_seconds: SEGMENT },
  });
  assert.equal(created.status, 201, created.text);
  // A subtitles track of the same media (local engine): the master carries it as a WebVTT rendition.
  const subs = await t.call('POST', '/tasks', { key, body: { kind: 'subtitles', file_id: source.id } });
  assert.equal(subs.status, 201, subs.text);
  const task = await waitForTask(t, key, created.json.data.id);
  assert.equal(task.status, 'completed', JSON.stringify(task.error));
  const subsTask = await waitForTask(t, key, subs.json.data.id);
  assert.equal(subsTask.status, 'completed', JSON.stringify(subsTask.error));
  const file = (await t.call('GET', `/files/${task.output.id}`, { key })).json.data;
  pkg = { task, file };
});
after(async () => {
  await t.stop();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('adaptive_video', () => {
  it('is in GET /tasks-config with its options, ranges and defaults', async () => {
    const res = await t.call('GET', '/tasks-config', { key });
    assert.equal(res.status, 200);
    const text = JSON.stringify(res.json);
    assert.match(text, /adaptive_video/);
    assert.match(text, /segment_seconds/);
    assert.match(text, /ladder/);
  });

  it('makes a master playlist file with the rungs at or below the source height, and a DASH manifest', async () => {
    const { file } = pkg;
    assert.equal(file.kind, 'video');
    assert.equal(file.type, 'application/vnd.apple.mpegurl');
    assert.equal(file.ref, 'hls');
    assert.equal(file.media_id, source.media_id);
    assert.deepEqual([file.width, file.height], [640, 360]);
    assert.ok(Math.abs(file.duration - 3) < 0.2, `duration ${file.duration}`);
    assert.equal(file.dash_url, `${file.url}.pkg/manifest.mpd`);
    assert.deepEqual(
      file.metadata.rungs.map((r: any) => r.height),
      [360, 240],
    );
    assert.ok(file.filesize > 20_000, 'the size counts the whole package');
    const media = (await t.call('GET', `/media/${file.media_id}`, { key })).json.data;
    assert.equal(media.urls.hls, file.url);
    assert.equal(media.urls.hls_dash, file.dash_url);
  });

  it('serves playlists that follow the HLS rules, and segments with their types, ranges and CORS', async () => {
    const master = await get(pkg.file.url);
    assert.equal(master.status, 200);
    assert.equal(master.headers['content-type'], 'application/vnd.apple.mpegurl');
    assert.equal(master.headers['access-control-allow-origin'], '*');
    assert.match(master.text, /^#EXTM3U\n#EXT-X-VERSION:\d+\n#EXT-X-INDEPENDENT-SEGMENTS\n/);
    const variants = masterVariants(master.text);
    assert.equal(variants.length, 2);
    for (const v of variants) {
      assert.ok(v.bandwidth > 0 && v.width && v.height && v.codecs, JSON.stringify(v));
      assert.match(v.codecs!, /^avc1\.[0-9a-f]{6},mp4a\.40\.2$/);
      assert.ok(v.uri.startsWith(`${pkg.file.filename}.pkg/`), v.uri);
      const media = await get(new URL(v.uri, pkg.file.url).href);
      assert.equal(media.status, 200);
      const target = Number(/#EXT-X-TARGETDURATION:(\d+)/.exec(media.text)![1]);
      for (const d of segmentDurations(media.text)) assert.ok(d <= target, `${d} > ${target}`);
      assert.match(media.text, /#EXT-X-PLAYLIST-TYPE:VOD/);
      assert.match(media.text, /#EXT-X-ENDLIST/);
      const [init, first] = playlistUris(media.text);
      const mediaUrl = new URL(v.uri, pkg.file.url).href;
      const initRes = await get(new URL(init!, mediaUrl).href);
      assert.equal(initRes.headers['content-type'], 'video/mp4');
      const seg = await get(new URL(first!, mediaUrl).href, { range: 'bytes=0-99' });
      assert.equal(seg.status, 206);
      assert.equal(seg.body.length, 100);
      assert.equal(seg.headers['content-type'], 'video/iso.segment');
      assert.match(String(seg.headers['cache-control']), /immutable/);
    }
    const missing = await get(`${pkg.file.url}.pkg/seg_9_99999.m4s`);
    assert.equal(missing.status, 404);
  });

  it('carries the media’s subtitles track as a WebVTT rendition', async () => {
    const master = await get(pkg.file.url);
    const rendition =
      /#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="[^"]+",LANGUAGE="[a-z]+",[^\n]*URI="([^"]+)"/.exec(
        master.text,
      );
    assert.ok(rendition, master.text);
    for (const v of masterVariants(master.text)) assert.equal(v.attributes.SUBTITLES, 'subs');
    const playlist = await get(new URL(rendition[1]!, pkg.file.url).href);
    assert.equal(playlist.status, 200);
    const [vtt] = playlistUris(playlist.text);
    const track = await get(vtt!);
    assert.equal(track.status, 200);
    assert.match(track.text, /^WEBVTT/);
  });

  it('decodes every rung end to end, keyframes aligned at the segment boundaries across rungs', async () => {
    const master = await get(pkg.file.url);
    const times: number[][] = [];
    for (const v of masterVariants(master.text)) {
      const url = new URL(v.uri, pkg.file.url).href;
      const probe = await ffprobe(url, ['-show_entries', 'format=duration:stream=codec_type,height']);
      assert.ok(Math.abs(Number(probe.format.duration) - 3) <= 0.2, `duration ${probe.format.duration}`);
      assert.ok(probe.streams.some((s: any) => s.codec_type === 'video' && s.height === v.height));
      await run('ffmpeg', ['-v', 'error', '-xerror', '-i', url, '-f', 'null', '-']);
      times.push(await keyframeTimes(url));
    }
    assert.deepEqual(times[0], times[1], 'the same keyframe times in every rung');
    for (let s = 0; s < 3; s += SEGMENT) assert.ok(times[0]!.includes(s), `a keyframe at ${s} s: ${times[0]}`);
  });

  it('has a DASH manifest FFmpeg reads, over the same segments', async () => {
    const mpd = await get(pkg.file.dash_url);
    assert.equal(mpd.status, 200);
    assert.equal(mpd.headers['content-type'], 'application/dash+xml');
    const probe = await ffprobe(pkg.file.dash_url, ['-show_entries', 'format=duration:stream=codec_type,height']);
    assert.ok(Math.abs(Number(probe.format.duration) - 3) <= 0.2);
    assert.deepEqual(
      probe.streams
        .filter((s: any) => s.codec_type === 'video')
        .map((s: any) => s.height)
        .sort(),
      [240, 360],
    );
  });

  it('makes a package without audio and without DASH when asked', async () => {
    const created = await t.call('POST', '/tasks', {
      key,
      body: { kind: 'adaptive_video', file_id: silent.id, dash: false, ladder: [{ height: 240, bitrate: 300_000 }] },
    });
    assert.equal(created.status, 201, created.text);
    const task = await waitForTask(t, key, created.json.data.id);
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    const file = (await t.call('GET', `/files/${task.output.id}`, { key })).json.data;
    assert.equal(file.dash_url, undefined);
    assert.equal(file.metadata.audio, false);
    const master = await get(file.url);
    assert.doesNotMatch(master.text, /TYPE=AUDIO/);
    assert.equal(masterVariants(master.text).length, 1);
    assert.equal((await get(`${file.url}.pkg/manifest.mpd`)).status, 404);
  });

  it('refuses bad options with the validation envelope naming the field', async () => {
    // Malformed options are 400 validation_failed (the catalogue's rule for every malformed
    // parameter); a rung above the source's height is well-formed but not for this source: 422.
    const above = await t.call('POST', '/tasks', {
      key,
      body: { kind: 'adaptive_video', file_id: source.id, ladder: [{ height: 240 }, { height: 720 }] },
    });
    assert.equal(above.status, 422, above.text);
    assert.equal(above.json.error.code, 'invalid_for_source');
    assert.deepEqual(
      above.json.error.details.map((d: any) => d.field),
      ['ladder[1].height'],
    );
    assert.match(above.json.error.message, /above the source's height of 360/);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ segment_seconds: 20 }, /segment_seconds/],
      [{ segment_seconds: 0 }, /segment_seconds/],
      [{ codec: 'vp8' }, /codec/],
      [{ ladder: [{ height: 240 }, { height: 240 }] }, /ladder\[1\]\.height/],
      [{ ladder: [] }, /ladder/],
    ];
    for (const [options, field] of cases) {
      const res = await t.call('POST', '/tasks', {
        key,
        body: { kind: 'adaptive_video', file_id: source.id, ...options },
      });
      assert.equal(res.status, 400, `${JSON.stringify(options)}: ${res.text}`);
      assert.equal(res.json.error.code, 'validation_failed');
      assert.match(JSON.stringify(res.json.error), field);
    }
    const ofPackage = await t.call('POST', '/tasks', { key, body: { kind: 'video', file_id: pkg.file.id } });
    assert.equal(ofPackage.status, 400, ofPackage.text);
    assert.match(ofPackage.json.error.message, /adaptive streaming package/);
    const wrong = await t.call('POST', '/tasks', { key, body: { kind: 'adaptive_video', file_id: audioOnly.id } });
    assert.equal(wrong.status, 400);
    assert.match(wrong.json.error.message, /adaptive_video takes video/);
  });

  it('is another project’s 404', async () => {
    const other = (await t.key('adaptive', 'other')).key;
    assert.equal((await t.call('GET', `/files/${pkg.file.id}`, { key: other })).status, 404);
    const otherProject = (await t.call('GET', '/project', { key: other })).json.data.id;
    const wrong = pkg.file.url.replace(`/d/${projectId}/`, `/d/${otherProject}/`);
    assert.equal((await get(wrong)).status, 404);
    assert.equal((await get(`${wrong}.pkg/manifest.mpd`)).status, 404);
  });

  it('plays end to end from one signed master URL when the project requires signatures', async () => {
    const patched = await t.call('PATCH', '/project', { key, body: { require_signed_delivery: true } });
    assert.equal(patched.status, 200, patched.text);
    try {
      assert.equal((await get(pkg.file.url)).status, 403);
      const signed = await t.call('POST', '/signatures', {
        key,
        body: { folder: pkg.file.folder, filename: pkg.file.filename },
      });
      assert.equal(signed.status, 201, signed.text);
      const url: string = signed.json.data.url;
      const master = await get(url);
      assert.equal(master.status, 200);
      assert.equal(master.headers['access-control-allow-origin'], undefined, 'no CORS by default when signed');
      const query = new URL(url).search;
      const variant = masterVariants(master.text)[0]!;
      assert.ok(variant.uri.endsWith(query), variant.uri);
      const variantUrl = new URL(variant.uri, url).href;
      const media = await get(variantUrl);
      const [, firstSegment] = playlistUris(media.text);
      assert.ok(firstSegment!.endsWith(query));
      await run('ffmpeg', ['-v', 'error', '-xerror', '-i', variantUrl, '-f', 'null', '-']);
      const segUrl = new URL(firstSegment!, variantUrl);
      assert.equal((await get(segUrl.href)).status, 200);
      const bare = `${segUrl.origin}${segUrl.pathname}`;
      assert.equal((await get(bare)).status, 403, 'a segment without the signature is refused');
      const tampered = new URL(segUrl.href);
      tampered.searchParams.set('expiry', String(Number(tampered.searchParams.get('expiry')) + 1));
      assert.equal((await get(tampered.href)).status, 403, 'a tampered signature is refused');
      const subs = /TYPE=SUBTITLES[^\n]*URI="([^"]+)"/.exec(master.text)![1]!;
      const [vtt] = playlistUris((await get(new URL(subs, url).href)).text);
      assert.match(vtt!, /\?expiry=\d+&method=get&signature=/, 'the track is signed for the same expiry');
      assert.equal((await get(vtt!)).status, 200);
      const mpd = await get(`${pkg.file.dash_url}${query}`);
      assert.equal(mpd.status, 200);
      assert.match(
        mpd.text,
        /media="seg_\$RepresentationID\$_\$Number%05d\$\.m4s\?expiry=\d+&amp;method=get&amp;signature=/,
      );
    } finally {
      await t.call('PATCH', '/project', { key, body: { require_signed_delivery: false } });
    }
  });

  it('deleting the file deletes its whole package', async () => {
    const created = await t.call('POST', '/tasks', {
      key,
      body: { kind: 'adaptive_video', file_id: silent.id, ladder: [{ height: 240 }], ref: 'gone' },
    });
    const task = await waitForTask(t, key, created.json.data.id);
    assert.equal(task.status, 'completed', JSON.stringify(task.error));
    const blobs = path.join(t.dataDir, 'blobs', 'projects', projectId, 'files');
    const pkgDir = path.join(blobs, `${task.output.id}.pkg`);
    assert.ok((await fs.readdir(pkgDir)).length > 3);
    assert.equal((await t.call('DELETE', `/files/${task.output.id}`, { key })).status, 200);
    assert.deepEqual(await fs.readdir(pkgDir).catch(() => []), []);
    const journal = await t.server.runtime.deps.db.selectFrom('blob_journal').selectAll().execute();
    assert.deepEqual(journal, []);
  });

  it('refuses a codec whose encoder this FFmpeg lacks, naming it', async () => {
    // An FFmpeg that hides libsvtav1 from -encoders and runs the real one otherwise.
    const wrapper = path.join(dir, 'ffmpeg-without-av1');
    await fs.writeFile(
      wrapper,
      '#!/bin/sh\nif [ "$2" = "-encoders" ]; then ffmpeg "$@" | grep -v libsvtav1; else exec ffmpeg "$@"; fi\n',
      { mode: 0o755 },
    );
    const other = await startTestServer({ MEDIAD_FFMPEG_PATH: wrapper });
    try {
      const k = await other.key('adaptive', 'av1');
      const res = await other.call('POST', '/tasks', {
        key: k.key,
        body: { kind: 'adaptive_video', url: 'https://example.com/clip.mp4', codec: 'av1' },
      });
      assert.equal(res.status, 422, res.text);
      assert.equal(res.json.error.code, 'engine_unavailable');
      assert.match(res.json.error.message, /libsvtav1/);
      // The same refusal when the kind is a workflow step (POST /tasks kind workflow) or an automation's step.
      const step = { kind: 'adaptive_video', codec: 'av1' };
      const workflow = await other.call('POST', '/tasks', {
        key: k.key,
        body: { kind: 'workflow', url: 'https://example.com/clip.mp4', workflow: [{ kind: 'video' }, step] },
      });
      assert.equal(workflow.status, 422, workflow.text);
      assert.equal(workflow.json.error.code, 'engine_unavailable');
      assert.deepEqual(
        workflow.json.error.details.map((d: any) => d.field),
        ['workflow[1].codec'],
      );
      const automation = await other.call('POST', '/automations', {
        key: k.key,
        body: { trigger: { kind: 'event', event: 'media.created' }, workflow: [step] },
      });
      assert.equal(automation.status, 422, automation.text);
      assert.equal(automation.json.error.code, 'engine_unavailable');
      assert.match(automation.json.error.message, /libsvtav1/);
      assert.equal((await other.call('GET', '/automations', { key: k.key })).json.data.length, 0);
      const h264 = await other.call('POST', '/automations', {
        key: k.key,
        body: { trigger: { kind: 'event', event: 'media.created' }, workflow: [{ kind: 'adaptive_video' }] },
      });
      assert.equal(h264.status, 201, h264.text);
    } finally {
      await other.stop();
    }
  });
});
