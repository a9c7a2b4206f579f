// Engine status for a future `mediad doctor`, against the real installed tools.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_POCKETSPHINX_MODEL } from '../../src/media/index.js';
import { ocrEngineStatus, sceneEngineStatus, speechEngineStatus } from '../../src/ai/index.js';

describe('engine status', () => {
  it('pocketsphinx: found with its Debian version and model, or says what to install', async () => {
    const ok = await speechEngineStatus();
    assert.deepEqual([ok.engine, ok.found, ok.model], ['pocketsphinx', true, 'en-us']);
    assert.match(ok.version ?? '', /^0\.8/);
    const missing = await speechEngineStatus({
      ...DEFAULT_POCKETSPHINX_MODEL,
      binary: '/nonexistent/pocketsphinx_continuous',
    });
    assert.equal(missing.found, false);
    assert.match(missing.message ?? '', /apt-get install -y pocketsphinx/);
    const noModel = await speechEngineStatus({ ...DEFAULT_POCKETSPHINX_MODEL, lm: '/nonexistent/en-us.lm.bin' });
    assert.equal(noModel.found, false);
    assert.match(noModel.message ?? '', /model files missing/);
  });

  it('tesseract: version and language data', async () => {
    const ok = await ocrEngineStatus();
    assert.deepEqual([ok.found, ok.model], [true, 'eng']);
    assert.match(ok.version ?? '', /^\d+\.\d+/);
    const noLang = await ocrEngineStatus('tesseract', 'xyz');
    assert.equal(noLang.found, false);
    assert.match(noLang.message ?? '', /tesseract-ocr-xyz/);
    assert.equal((await ocrEngineStatus('/nonexistent/tesseract')).found, false);
  });

  it('ffmpeg has scdet', async () => {
    assert.equal((await sceneEngineStatus()).found, true);
  });
});
