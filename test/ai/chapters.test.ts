// Chapters on a generated multi-scene video: each scene opens with a title card drawn by FFmpeg
// drawtext (DejaVu Sans Bold); scene cuts by scdet, titles read back by tesseract.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import webvtt from 'webvtt-parser';
import { isMediaTransformError } from '../../src/media/index.js';
import {
  chaptersJson,
  chaptersVtt,
  detectChapters,
  findSceneCuts,
  grabKeyframes,
  ocrImage,
  parseSubtitles,
  planChapters,
  speechPauses,
  titleFromOcr,
  titleFromSpeech,
} from '../../src/ai/index.js';
import { sceneVideo, silenceWav, type SceneVideo } from '../helpers/ai-fixtures.js';

const SCENES = [
  { title: 'Introduction', source: 'testsrc2' },
  { title: 'Second Topic', source: 'smptehdbars' },
  { title: 'Final Words', source: 'mandelbrot' },
];

let video: SceneVideo;
let work: string;
before(async () => {
  video = await sceneVideo(SCENES, 2, 6);
  work = await mkdtemp(join(tmpdir(), 'mediad-ai-chapters-'));
});
after(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('scene cuts and OCR', () => {
  it('finds every cut within 0.5 s', async () => {
    const cuts = await findSceneCuts(video.path);
    const truth = [...video.sceneStarts.slice(1), ...video.contentStarts].sort((a, b) => a - b);
    for (const t of truth)
      assert.ok(
        cuts.some((c) => Math.abs(c.time - t) <= 0.5),
        `no cut near ${t} s in ${JSON.stringify(cuts)}`,
      );
    for (const c of cuts)
      assert.ok(
        truth.some((t) => Math.abs(c.time - t) <= 0.5),
        `cut at ${c.time} s is not a scene change`,
      );
  });

  it('reads a title card exactly and nothing on a busy frame', async () => {
    const [card, busy] = await grabKeyframes(video.path, [0.5, 5], work);
    const read = await ocrImage(card!.path);
    assert.equal(read.text, 'Introduction');
    assert.ok(read.lines[0]!.confidence > 0.8);
    assert.equal(read.engine.name, 'tesseract');
    assert.equal(titleFromOcr((await ocrImage(busy!.path)).lines), null);
  });

  it('refuses scene detection on audio', async () => {
    await assert.rejects(
      findSceneCuts(await silenceWav(1)),
      (e: unknown) => isMediaTransformError(e) && e.code === 'invalid_for_input',
    );
  });
});

describe('detectChapters', () => {
  it('makes one chapter per scene, titled from its title card', async () => {
    const progress: number[] = [];
    const { chapters } = await detectChapters(video.path, {
      workDir: work,
      minChapterSeconds: 5,
      onProgress: (p) => progress.push(p),
    });
    assert.equal(chapters.length, SCENES.length, JSON.stringify(chapters));
    chapters.forEach((c, i) => {
      assert.ok(Math.abs(c.start - video.sceneStarts[i]!) <= 0.5, `chapter ${i} starts at ${c.start}`);
      assert.equal(c.title, SCENES[i]!.title);
      assert.equal(c.titleSource, 'ocr');
    });
    assert.ok(Math.abs(chapters.at(-1)!.end - video.duration) < 0.1);
    assert.equal(progress.at(-1), 100);
    assert.deepEqual(
      (await readdir(work)).filter((f) => f.startsWith('chapters-')),
      [],
      'keyframes left behind',
    );

    const vtt = chaptersVtt(chapters);
    assert.deepEqual(new webvtt.WebVTTParser().parse(vtt, 'chapters').errors, []);
    const back = parseSubtitles(vtt, 'vtt', { mediaDuration: video.duration });
    assert.deepEqual(back.problems, []);
    assert.deepEqual(
      back.cues.map((c) => c.lines[0]),
      SCENES.map((s) => s.title),
    );
    const json = chaptersJson(chapters);
    assert.deepEqual(Object.keys(json), ['chapters']);
    assert.deepEqual(Object.keys(json.chapters[0]!), ['index', 'start', 'end', 'title']);
    assert.deepEqual(
      json.chapters.map((c) => c.index),
      [0, 1, 2],
    );
  });
});

describe('planChapters and titles (pure)', () => {
  const cuts = (...times: number[]) => times.map((time) => ({ time, score: 30 }));

  it('merges cuts closer than the minimum into the earlier boundary and keeps the last chapter long enough', () => {
    const spans = planChapters({ duration: 40, cuts: cuts(2, 8, 10, 16, 18, 36), minChapterSeconds: 5 });
    assert.deepEqual(
      spans.map((s) => [s.start, s.end]),
      [
        [0, 8],
        [8, 16],
        [16, 40],
      ],
    );
  });

  it('moves a cut that falls inside speech into the nearest pause', () => {
    const words = [
      { start: 0, end: 9.6 },
      { start: 10.4, end: 19 },
    ];
    const spans = planChapters({
      duration: 30,
      cuts: cuts(9.2),
      pauses: speechPauses(words, 30),
      minChapterSeconds: 5,
    });
    assert.equal(spans[1]!.start, 10);
  });

  it('starts chapters at long pauses when there is no cut', () => {
    const words = [
      { start: 0, end: 12 },
      { start: 15, end: 30 },
    ];
    const spans = planChapters({ duration: 30, cuts: [], pauses: speechPauses(words, 30), minChapterSeconds: 5 });
    assert.deepEqual(
      spans.map((s) => s.start),
      [0, 13.5],
    );
  });

  it('titles from speech and OCR', () => {
    assert.equal(
      titleFromSpeech('welcome to the weekly meeting of the club'.split(' ').map((text) => ({ text }))),
      'Welcome to the weekly meeting of…',
    );
    assert.equal(
      titleFromOcr([
        { text: 'Sales Report', confidence: 0.95 },
        { text: '~ .', confidence: 0.99 },
        { text: 'noise', confidence: 0.3 },
      ]),
      'Sales Report',
    );
    assert.equal(titleFromOcr([{ text: 'a', confidence: 0.99 }]), null);
  });
});
