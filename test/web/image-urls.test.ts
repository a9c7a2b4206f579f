import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { chromiumAvailable } from '../helpers/browser.js';
import { fixture } from '../helpers/fixtures.js';
import { createUserInOrg } from '../../src/services/people/users.js';
import { PASSWORD, startWebTest, useSessionCookie, type WebTest } from '../helpers/web.js';
import { putFile, until } from './media-support.js';

// Image URLs in the web app (issue 24), in Chromium against a real server: the library's cards
// and a video's poster load through /img/… (signed by POST /image-urls, at the size shown, with a
// 2× candidate), the "Copy image URL" builder, and the key, presets and cache budget on the
// settings page.

let w: WebTest;

before(async () => {
  w = await startWebTest();
});
after(() => w?.close());

/** An <img>'s source and natural size once loaded (run in the page). */
const loaded = (img: { decode(): Promise<void>; naturalWidth: number; currentSrc: string; srcset: string }) =>
  img.decode().then(() => ({ width: img.naturalWidth, src: img.currentSrc, srcset: img.srcset }));

describe('image URLs in the web app', { skip: !chromiumAvailable() && 'no chromium' }, () => {
  let imageMedia = '';
  let videoMedia = '';

  it('loads library cards and a video card’s poster through /img at the card’s size', async () => {
    const { page, outside, consoleErrors } = w.page;
    const { key, projectId } = w.owner;
    imageMedia = (await putFile(w.t, key, projectId, 'photo.jpg', fs.readFileSync(await fixture('image-jpeg'))))
      .media_id;
    videoMedia = (await putFile(w.t, key, projectId, 'clip.mp4', fs.readFileSync(await fixture('video-mp4')))).media_id;
    await page.goto(`${w.t.base}/app/p/${projectId}/media`);
    const card = page.locator(`[data-media="${imageMedia}"] .thumb img`);
    await card.waitFor();
    const img = await card.evaluate(loaded);
    assert.ok(img.src.startsWith(`${w.t.base}/img/${projectId}/`), img.src);
    assert.match(img.srcset, / 2x$/);
    // 320×180 cover of a 640×480 photo, not the original.
    assert.equal(img.width, 320);
    const poster = page.locator(`[data-media="${videoMedia}"] .thumb img`);
    await poster.waitFor();
    const frame = await poster.evaluate(loaded);
    assert.ok(frame.src.includes('/img/'), frame.src);
    assert.equal(frame.width, 320);
    assert.deepEqual(outside, []);
    assert.deepEqual(consoleErrors, []);
  });

  it('gives the detail page a video poster and a Copy image URL builder with a preview', async () => {
    const { page, consoleErrors } = w.page;
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/media/${videoMedia}`);
    const video = page.locator('video[slot="media"]');
    await video.waitFor();
    await until(async () => ((await video.getAttribute('poster')) ?? '').includes('/img/'), 'the poster');
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/media/${imageMedia}`);
    await page.getByRole('heading', { name: 'Image URL' }).waitFor();
    await page.getByLabel('Width', { exact: true }).fill('200');
    await page.getByLabel('Height', { exact: true }).fill('100');
    await page.getByLabel('Format', { exact: true }).selectOption('webp');
    await page.getByRole('button', { name: 'Make image URL' }).click();
    const preview = page.getByAltText('Preview of the image URL');
    await preview.waitFor();
    const shown = await preview.evaluate(loaded);
    assert.equal(shown.width, 200);
    const url = await page.locator('[data-image-url]').getAttribute('data-image-url');
    assert.match(url ?? '', /\/width:200,height:100,fit:cover,format:webp\//);
    const res = await w.t.call('GET', url!.replace(w.t.base, ''), { contract: false });
    assert.equal(res.headers['content-type'], 'image/webp');
    assert.deepEqual(consoleErrors, []);
  });

  it('shows the image URL key on the settings page, reveals it, and adds a preset', async () => {
    const { page, consoleErrors } = w.page;
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/settings`);
    await page.getByRole('heading', { name: 'Image URLs' }).waitFor();
    await page.locator('[data-image-url-key]').waitFor();
    await page.getByRole('button', { name: 'Reveal key' }).click();
    const key = await page.getByLabel('Image URL key').textContent();
    assert.match(key ?? '', /^imk_/);
    await page.getByLabel('Preset name').fill('card');
    await page.getByRole('button', { name: 'Add preset' }).click();
    await page.locator('[data-preset="card"]').waitFor();
    const presets = (await w.t.call('GET', '/image-presets', { key: w.owner.key })).json.data;
    assert.deepEqual(
      presets.map((p: { name: string; path: string }) => [p.name, p.path]),
      [['card', 'width:320,height:180,fit:cover,format:auto']],
    );
    // The cache: what the project's results take (the cards above made some), and its budget.
    const settings = async () => (await w.t.call('GET', '/project/image-url-settings', { key: w.owner.key })).json.data;
    const usage = page.locator('[data-image-cache-usage]');
    await usage.waitFor();
    const before = await settings();
    assert.ok(before.cache.results > 0, JSON.stringify(before.cache));
    assert.equal(await usage.getAttribute('data-image-cache-usage'), String(before.cache.used_bytes));
    assert.match((await usage.textContent()) ?? '', /the server’s default/);
    await page.getByLabel('Cache budget (MiB)').fill('0.001');
    await page.getByRole('button', { name: 'Save budget' }).click();
    await until(async () => (await usage.getAttribute('data-image-cache-usage')) === '0', 'the budget applied');
    const small = await settings();
    assert.equal(small.cache_bytes, 1049);
    assert.deepEqual([small.cache.budget_bytes, small.cache.results], [1049, 0]);
    assert.doesNotMatch((await usage.textContent()) ?? '', /the server’s default/);
    await page.getByLabel('Cache budget (MiB)').fill('');
    await page.getByRole('button', { name: 'Save budget' }).click();
    await until(async () => /the server’s default/.test((await usage.textContent()) ?? ''), 'the default again');
    assert.equal((await settings()).cache_bytes, null);
    assert.deepEqual(consoleErrors, []);
  });

  it('gives a viewer image URLs too: the card through /img and the builder (signing reads files)', async () => {
    await createUserInOrg(w.t.server.runtime.deps, {
      email: 'vic@example.com',
      name: 'Vic Viewer',
      password: PASSWORD,
      org: 'Acme',
      role: 'viewer',
    });
    const signIn = await w.t.call('POST', '/auth/sign-in', { body: { email: 'vic@example.com', password: PASSWORD } });
    assert.equal(signIn.status, 200, signIn.text);
    const viewer = await w.newPage();
    await useSessionCookie(w.t, viewer, signIn.headers['set-cookie']!.split(';')[0]!);
    const { page, consoleErrors } = viewer;
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/media`);
    const card = page.locator(`[data-media="${imageMedia}"] .thumb img`);
    await card.waitFor();
    const img = await card.evaluate(loaded);
    assert.ok(img.src.startsWith(`${w.t.base}/img/${w.owner.projectId}/`), img.src);
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/media/${imageMedia}`);
    await page.getByRole('heading', { name: 'Image URL' }).waitFor();
    await page.getByRole('button', { name: 'Make image URL' }).click();
    await page.getByAltText('Preview of the image URL').waitFor();
    assert.deepEqual(consoleErrors, []);
    await viewer.context.close();
  });
});
