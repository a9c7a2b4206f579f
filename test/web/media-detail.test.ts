import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { spokenParagraph, speechVideo } from '../helpers/ai-fixtures.js';
import { chromiumAvailable } from '../helpers/browser.js';
import { fixture } from '../helpers/fixtures.js';
import { waitForTask } from '../helpers/tasks.js';
import { startWebTest, type WebTest } from '../helpers/web.js';
import { axeViolations, screenshot } from '../helpers/a11y.js';
import { putFile, until, type VideoLike } from './media-support.js';

// The media detail page in Chromium against a real server: an image task run from the form
// generated from GET /tasks-config (the API's validation error shown at its field, then the
// task completing and the compare slider offering its output), a video with a subtitles track
// (made by a real `subtitles` task on spoken audio) that plays with the subtitles showing and
// whose transcript seeks the player, axe, and screenshots.

let w: WebTest;

before(async () => {
  w = await startWebTest();
});
after(() => w?.close());

describe('the media detail page', { skip: !chromiumAvailable() && 'no chromium' }, () => {
  it('runs an image task from the generated form and compares its output with the original', async () => {
    const { page, outside, consoleErrors } = w.page;
    const file = await putFile(
      w.t,
      w.owner.key,
      w.owner.projectId,
      'photo.jpg',
      fs.readFileSync(await fixture('image-jpeg')),
    );
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/media/${file.media_id}`);
    await page.getByRole('heading', { name: 'photo.jpg' }).waitFor();
    await page.getByLabel('Kind', { exact: true }).selectOption('image');
    // Fields come from the kind's option schema: an enum is a select, a number has its bounds.
    const width = page.getByLabel('width', { exact: true });
    assert.equal(await width.getAttribute('type'), 'number');
    assert.equal(await width.getAttribute('max'), '8192');
    assert.deepEqual(await page.getByLabel('fit', { exact: true }).locator('option').allTextContents(), [
      'Default',
      'contain',
      'cover',
      'fill',
      'inside',
      'outside',
    ]);
    // The API's validation error lands at the field it names.
    await page.getByLabel('background', { exact: true }).fill('red');
    await page.getByRole('button', { name: 'Run image' }).click();
    const bgError = page.locator('[data-option="background"] .field-error');
    await bgError.waitFor();
    assert.match((await bgError.textContent()) ?? '', /pattern/);
    await page.getByLabel('background', { exact: true }).fill('');
    await width.fill('120');
    await page.getByLabel('format', { exact: true }).selectOption('png');
    await page.getByRole('button', { name: 'Run image' }).click();
    await page.locator('.timeline li[data-status="completed"]').waitFor({ timeout: 60_000 });
    const tasks = (await w.t.call('GET', `/tasks?media_id=${file.media_id}`, { key: w.owner.key })).json.data;
    assert.equal(tasks.length, 1);
    assert.equal(tasks[0].options.width, 120);
    assert.equal(tasks[0].options.format, 'png');
    // The compare slider offers the new image over the original.
    const compare = page.locator('.compare[data-compare]');
    await compare.waitFor({ timeout: 10_000 });
    assert.equal(await compare.getAttribute('data-compare'), tasks[0].output.id);
    await page.getByLabel('Compare position').fill('20');
    assert.match((await page.locator('.compare-top').getAttribute('style')) ?? '', /inset\(0px 0px 0px 20%\)/);
    // The derived file, which has no ref, says what made it and links to that task.
    const madeBy = page.getByRole('link', { name: 'image · width 120, format png' });
    await madeBy.waitFor();
    assert.equal(await madeBy.getAttribute('href'), `/app/p/${w.owner.projectId}/tasks?task=${tasks[0].id}`);
    // The files table fits its column at 1280 and 1600 px: its actions are in view, not scrolled away.
    for (const width of [1280, 1600]) {
      await page.setViewportSize({ width, height: 900 });
      const wrap = page.locator('section[aria-labelledby="files-h"] .table-wrap');
      const [scroll, client] = await wrap.evaluate((e) => [e.scrollWidth, e.clientWidth]);
      assert.ok(scroll <= client, `${width} px: the table is ${scroll} px wide in ${client} px`);
      for (const name of ['Copy URL', 'Download', 'Signed URL']) {
        const box = await wrap.getByText(name, { exact: true }).first().boundingBox();
        const frame = await wrap.boundingBox();
        assert.ok(box && frame && box.x + box.width <= frame.x + frame.width, `${width} px: ${name} is in view`);
      }
    }
    await page.setViewportSize({ width: 1280, height: 720 });
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(outside, []);
    // The one refused request is the deliberate one (the browser logs every 4xx answer).
    assert.deepEqual(consoleErrors, [
      'Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);
    consoleErrors.length = 0;
  });

  it('plays a video with its subtitles showing, and the transcript seeks it', async () => {
    const { page, outside, consoleErrors } = w.page;
    const wav = await spokenParagraph(
      ['The quick brown fox jumps over the lazy dog.', 'Hello world, this is a test.'],
      1,
    );
    const video = await speechVideo(wav, 'web-detail');
    const file = await putFile(w.t, w.owner.key, w.owner.projectId, 'talk.mp4', fs.readFileSync(video));
    // A webm rendition too, in case this Chromium plays no H.264 (the player offers every source).
    for (const body of [
      { kind: 'subtitles', file_id: file.id },
      { kind: 'video', file_id: file.id, format: 'webm', ref: 'webm' },
    ]) {
      const task = await w.t.call('POST', '/tasks', { key: w.owner.key, body });
      assert.equal(task.status, 201, task.text);
      assert.equal((await waitForTask(w.t, w.owner.key, task.json.data.id, undefined, 180_000)).status, 'completed');
    }
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/media/${file.media_id}`);
    await page.getByRole('heading', { name: 'talk.mp4' }).waitFor();
    const v = page.locator('video');
    await v.waitFor({ state: 'attached' });
    const read = <T>(fn: (v: VideoLike) => T) => v.evaluate(fn);
    await until(() => read((el) => el.textTracks.length > 0), 'the tracks');
    await read((el) => {
      el.muted = true;
      return el.play();
    });
    await until(() => read((el) => el.currentTime > 0.5), 'playback to advance');
    assert.equal(await read((el) => Array.from(el.textTracks).find((t) => t.kind === 'subtitles')?.mode), 'showing');
    await until(
      () => read((el) => (Array.from(el.textTracks).find((t) => t.kind === 'subtitles')?.activeCues?.length ?? 0) > 0),
      'a subtitle cue to be active',
    );
    // The transcript (read from the subtitles) seeks the player.
    const items = page.getByRole('list', { name: 'Transcript' }).getByRole('button');
    await items.first().waitFor();
    const last = items.last();
    const label = (await last.getAttribute('aria-label')) ?? '';
    await read((el) => el.pause());
    await last.click();
    const target = Number(
      /(\d+):(\d+)$/
        .exec(label)!
        .slice(1)
        .reduce((m, s) => String(Number(m) * 60 + Number(s))),
    );
    await until(async () => Math.abs((await read((el) => el.currentTime)) - target) < 1.5, 'the seek');
    assert.deepEqual(await axeViolations(page), []);
    await read((el) => el.pause());
    await screenshot(page, 'media-detail', { fullPage: true });
    assert.deepEqual(outside, []);
    assert.deepEqual(consoleErrors, []);
  });
});
