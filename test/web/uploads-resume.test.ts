// Resumable uploads in the web app (issue 25): a file dropped on the library is sent with tus in
// 64 MiB chunks (the browser's upload throttled so there is time to act): paused (the offset stops),
// resumed, then the page is reloaded mid-upload and the same file dropped again resumes the same
// upload (no second one is created) and ends as a file with the same bytes.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { chromiumAvailable } from '../helpers/browser.js';
import { startWebTest, type WebTest } from '../helpers/web.js';
import { until } from './media-support.js';

const SIZE = 20 * 1024 * 1024;
const NAME = 'long-take.wav';

/** The file's bytes, built the same way here and in the page: a WAV header, then a fixed pattern. */
const MAKE_FILE = `((size) => {
  const bytes = new Uint8Array(size);
  const v = new DataView(bytes.buffer);
  const ascii = (o, s) => { for (let i = 0; i < s.length; i++) bytes[o + i] = s.charCodeAt(i); };
  ascii(0, 'RIFF'); v.setUint32(4, size - 8, true); ascii(8, 'WAVEfmt '); v.setUint32(16, 16, true);
  v.setUint16(20, 1, true); v.setUint16(22, 2, true); v.setUint32(24, 48000, true); v.setUint32(28, 192000, true);
  v.setUint16(32, 4, true); v.setUint16(34, 16, true); ascii(36, 'data'); v.setUint32(40, size - 44, true);
  for (let i = 44; i < size; i++) bytes[i] = (i * 31 + (i >> 9)) & 255;
  return bytes;
})`;

const dropFile = `(() => {
  const bytes = ${MAKE_FILE}(${SIZE});
  const dt = new DataTransfer();
  dt.items.add(new File([bytes], '${NAME}', { type: 'audio/wav', lastModified: 1700000000000 }));
  const zone = document.querySelector('[data-testid="dropzone"]');
  zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
})()`;

let w: WebTest;
before(async () => {
  w = await startWebTest({ MEDIAD_SERVE_WORKERS: 'false' });
});
after(() => w?.close());

describe('resumable uploads in the library', { skip: !chromiumAvailable() && 'no chromium' }, () => {
  it('pauses, resumes, and resumes the same upload after a reload', async () => {
    const { page, outside, consoleErrors } = w.page;
    const deps = w.t.server.runtime.deps;
    const uploads = async () =>
      deps.db.selectFrom('uploads').selectAll().where('project_id', '=', w.owner.projectId).execute();
    // Chromium's own throttling, so that pausing and reloading happen mid-upload.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 8 * 1024 * 1024,
    });
    await page.goto(`${w.t.base}/app/p/${w.owner.projectId}/media`);
    await page.getByRole('heading', { name: 'No media yet' }).waitFor();
    await page.evaluate(dropFile);
    const row = page.locator(`[data-upload="${NAME}"]`);
    const sent = async () => Number((await row.locator('progress').getAttribute('value')) ?? 0);
    await until(async () => (await sent()) > 2 * 1024 * 1024, 'some bytes sent');
    await page.getByRole('button', { name: `Pause ${NAME}` }).click();
    await row.and(page.locator('[data-status="paused"]')).waitFor();
    const pausedAt = await sent();
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(await sent(), pausedAt, 'nothing is sent while paused');
    assert.ok(pausedAt < SIZE);
    await page.getByRole('button', { name: `Resume ${NAME}` }).click();
    await until(async () => (await sent()) > pausedAt + 1024 * 1024, 'the upload to go on');
    // Reload mid-upload: the server keeps what arrived.
    await page.reload();
    await page.getByRole('heading', { name: 'No media yet' }).waitFor();
    const [before] = await uploads();
    assert.ok(before, 'the upload exists on the server');
    const head = await request(`${w.t.base}/uploads/tus/${before.id}`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${w.owner.key}`, 'tus-resumable': '1.0.0' },
      dispatcher: w.t.agent,
    });
    await head.body.dump();
    const offset = Number(head.headers['upload-offset']);
    assert.ok(offset > 0 && offset < SIZE, `mid-upload at the reload (${offset})`);
    // The same file dropped again resumes that upload (its URL was kept in localStorage).
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    });
    await page.evaluate(dropFile);
    await row.and(page.locator('[data-status="done"]')).waitFor({ timeout: 20_000 });
    const after = await uploads();
    assert.equal(after.length, 1, 'no second upload was created');
    assert.ok(after[0]!.file_id);
    const file = (await w.t.call('GET', `/files/${after[0]!.file_id}`, { key: w.owner.key })).json.data;
    assert.equal(file.filesize, SIZE);
    assert.equal(file.kind, 'audio');
    const expected = new Function(`return ${MAKE_FILE}`)()(SIZE) as Uint8Array;
    const got = await request(file.url, { dispatcher: w.t.agent });
    const bytes = Buffer.from(await got.body.arrayBuffer());
    assert.equal(createHash('sha256').update(bytes).digest('hex'), createHash('sha256').update(expected).digest('hex'));
    assert.deepEqual(outside, []);
    assert.deepEqual(consoleErrors, []);
  });
});
