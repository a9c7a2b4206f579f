// NSFW with the real nsfwjs MobileNetV2 model on TensorFlow.js (WASM backend). Only benign
// generated images are used; the class-to-score mapping is checked on its own below.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { isMediaTransformError } from '../../src/media/index.js';
import {
  flaggedSpans,
  nsfwEngineStatus,
  nsfwImage,
  nsfwIntelligence,
  nsfwModelLoads,
  nsfwVideo,
  scoresFromClasses,
  verdict,
} from '../../src/ai/index.js';
import { fixture } from '../helpers/fixtures.js';
import { silenceWav } from '../helpers/ai-fixtures.js';

let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'mediad-ai-nsfw-'));
});
after(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

const inUnit = (v: number) => Number.isFinite(v) && v >= 0 && v <= 1;

describe('nsfwImage / nsfwVideo', () => {
  it('scores benign images as not detected, loading the model once for all of them', async () => {
    assert.equal(nsfwModelLoads(), 0);
    const grey = join(work, 'grey.png');
    await sharp({ create: { width: 300, height: 200, channels: 3, background: '#808080' } })
      .greyscale()
      .png()
      .toFile(grey);
    const alpha = join(work, 'alpha.png');
    await sharp({ create: { width: 120, height: 90, channels: 4, background: { r: 20, g: 200, b: 90, alpha: 0.4 } } })
      .png()
      .toFile(alpha);
    const images = [await fixture('image-jpeg'), await fixture('image-png'), await fixture('image-webp'), grey, alpha];
    // Concurrent first calls must share one load.
    const results = await Promise.all(images.map((p) => nsfwImage(p)));
    assert.equal(nsfwModelLoads(), 1);
    for (const [i, r] of results.entries()) {
      assert.equal(r.detected, false, `${images[i]}: ${JSON.stringify(r)}`);
      assert.ok(inUnit(r.nudity) && inUnit(r.sexual) && inUnit(r.confidence), JSON.stringify(r));
      const sum = Object.values(r.classes).reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - 1) < 0.01, `class probabilities sum to ${sum}`);
      assert.deepEqual(r.engine, { name: 'nsfwjs', model: 'MobileNetV2', version: r.engine.version });
    }
    await nsfwImage(images[0]!);
    assert.equal(nsfwModelLoads(), 1, 'the model was loaded again');
  });

  it('writes the intelligence JSON without violence and gore, saying why', async () => {
    const json = nsfwIntelligence(await nsfwImage(await fixture('image-jpeg')));
    assert.equal(json.object, 'intelligence');
    assert.equal(json.kind, 'nsfw');
    assert.equal('violence' in json, false);
    assert.equal('gore' in json, false);
    assert.match(json.not_scored?.violence ?? '', /no such class/);
    assert.match(json.not_scored?.gore ?? '', /no such class/);
    assert.ok(inUnit(json.nudity) && inUnit(json.sexual));
  });

  it('samples a video and reports frames per second and an empty timeline', async () => {
    const progress: number[] = [];
    const r = await nsfwVideo(await fixture('video-1080p-10s'), { interval: 2, onProgress: (p) => progress.push(p) });
    assert.equal(r.detected, false);
    assert.equal(r.frames?.count, 5);
    assert.equal(r.frames?.interval, 2);
    assert.ok((r.frames?.per_second ?? 0) > 0);
    assert.deepEqual(r.timeline, []);
    assert.equal(progress.at(-1), 100);
    assert.equal(nsfwModelLoads(), 1);
  });

  it('refuses audio as input', async () => {
    await assert.rejects(
      nsfwVideo(await silenceWav(1)),
      (e: unknown) => isMediaTransformError(e) && e.code === 'invalid_for_input',
    );
  });

  it('reports the warm model in its status', async () => {
    const status = await nsfwEngineStatus();
    assert.equal(status.found, true);
    assert.equal(status.model, 'MobileNetV2');
    assert.match(status.version ?? '', /^4\./);
  });
});

describe('class-to-score mapping (pure)', () => {
  const classes = (over: Partial<Record<'drawing' | 'hentai' | 'neutral' | 'porn' | 'sexy', number>>) => ({
    drawing: 0,
    hentai: 0,
    neutral: 0,
    porn: 0,
    sexy: 0,
    ...over,
  });

  it('nudity = porn + hentai, sexual = porn + hentai + sexy', () => {
    const s = scoresFromClasses(classes({ porn: 0.5, hentai: 0.25, sexy: 0.125, neutral: 0.125 }));
    assert.deepEqual(s, { nudity: 0.75, sexual: 0.875 });
    assert.deepEqual(scoresFromClasses(classes({ neutral: 0.7, drawing: 0.3 })), { nudity: 0, sexual: 0 });
  });

  it('detects at the threshold and reports the verdict confidence', () => {
    const suggestive = scoresFromClasses(classes({ sexy: 0.6, neutral: 0.4 }));
    assert.deepEqual(verdict(suggestive, 0.5), { detected: true, confidence: 0.6 });
    assert.equal(verdict(suggestive, 0.7).detected, false);
    assert.ok(Math.abs(verdict(suggestive, 0.7).confidence - 0.4) < 1e-9);
  });

  it('merges consecutive flagged frames into spans', () => {
    const f = (time: number, sexual: number) => ({ time, nudity: sexual / 2, sexual });
    const spans = flaggedSpans([f(0, 0.1), f(1, 0.8), f(2, 0.9), f(3, 0.2), f(4, 0.95)], 1, 0.5, 4.5);
    assert.deepEqual(
      spans.map((s) => [s.start, s.end, s.sexual, s.categories]),
      [
        [0.5, 2.5, 0.9, ['sexual']],
        [3.5, 4.5, 0.95, ['sexual']],
      ],
    );
  });
});
