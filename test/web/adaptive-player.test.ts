import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { chromiumAvailable } from '../helpers/browser.js';
import { startWebTest, type WebTest } from '../helpers/web.js';
import { putFile, until, type VideoLike } from './media-support.js';

// The media detail player streams an adaptive_video package in Chromium: hls.js (bundled, loaded
// on demand) plays the master playlist, the quality menu lists the rungs and "Auto", and choosing
// a rung fetches that rung's segments. Nothing is fetched from outside the server.

let w: WebTest;
let dir: string;

before(async () => {
  w = await startWebTest();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-adaptive-web-'));
});
after(async () => {
  await w?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('the adaptive player', { skip: !chromiumAvailable() && 'no chromium' }, () => {
  it('plays the HLS package with hls.js and switches rungs from the quality menu', async () => {
    const { page, outside, consoleErrors } = w.page;
    const clip = path.join(dir, 'clip.mp4');
    await promisify(execFile)('ffmpeg', [
      ...['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=30:duration=6'],
      ...['-f', 'lavfi', '-i', 'sine=frequency=440:duration=6', '-c:v', 'libx264', '-preset', 'ultrafast'],
      ...['-c:a', 'aac', '-shortest', clip],
    ]);
    const file = await putFile(w.t, w.owner.key, w.owner.projectId, 'stream.mp4', await fs.readFile(clip));
    // Run from the media page's form, generated from GET /tasks-config.
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/media/${file.media_id}`);
    await page.getByRole('heading', { name: 'stream.mp4' }).waitFor();
    await page.getByLabel('Kind', { exact: true }).selectOption('adaptive_video');
    await page.getByLabel('segment seconds', { exact: true }).fill('1');
    await page.getByRole('button', { name: 'Run adaptive_video' }).click();
    await page.locator('.timeline li[data-status="completed"]').waitFor({ timeout: 60_000 });
    const tasks = (await w.t.call('GET', `/tasks?media_id=${file.media_id}`, { key: w.owner.key })).json.data;
    assert.equal(tasks[0].kind, 'adaptive_video');
    assert.equal(tasks[0].options.segment_seconds, 1);
    await page.reload();
    await page.getByRole('heading', { name: 'stream.mp4' }).waitFor();
    const quality = page.getByLabel('Quality');
    await until(async () => (await quality.locator('option').count()) === 3, 'the quality menu');
    const labels = await quality.locator('option').allTextContents();
    assert.equal(labels[0], 'Auto');
    assert.match(labels[1]!, /^360p \(\d+ kbit\/s\)$/);
    assert.match(labels[2]!, /^240p \(\d+ kbit\/s\)$/);
    const v = page.locator('video');
    const read = <T>(fn: (v: VideoLike) => T) => v.evaluate(fn);
    assert.ok(
      requested.some((u) => u.includes('.pkg/media_')),
      'hls.js loads the variant playlists',
    );
    await read((el) => {
      el.muted = true;
      return el.play();
    });
    await until(() => read((el) => el.currentTime > 0.5), 'playback to advance');
    // The 240p rung is stream 1 of the package: choosing it fetches its segments.
    const before240 = requested.filter((u) => /\.pkg\/seg_1_\d+\.m4s/.test(u)).length;
    await quality.selectOption({ label: labels[2]! });
    await until(
      async () => requested.filter((u) => /\.pkg\/seg_1_\d+\.m4s/.test(u)).length > before240,
      'segments of the 240p rung',
    );
    await until(() => read((el) => el.currentTime > 1.5), 'playback to go on after the switch');
    assert.deepEqual(outside, []);
    assert.deepEqual(consoleErrors, []);
  });
});
