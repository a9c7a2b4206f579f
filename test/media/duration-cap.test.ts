// Hardening issue, point 3: MEDIAD_MAX_DURATION_SECONDS enforced while decoding. Every test runs
// against the probe a header-trusting probe made of the lying file (10 s; it holds 300 s), as
// stored for every file ingested before the probe looked past the header.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isAppError } from '../../src/errors.js';
import {
  buildAudioArgs,
  buildStoryboard,
  buildVideoArgs,
  cappedLengthArgs,
  checkOutputCap,
  grabVideoFrame,
  outputCap,
  probeFile,
  runFfmpeg,
  storyboardArgs,
  planStoryboard,
  type ProbeResult,
  type TrimOptions,
  type VideoOptions,
} from '../../src/media/index.js';
import { fixture } from '../helpers/fixtures.js';

const LIMIT = { maxDurationSeconds: 60 };
const NO_LIMITS = { maxPixels: Number.MAX_SAFE_INTEGER, maxDurationSeconds: Number.MAX_SAFE_INTEGER };
const VIDEO: VideoOptions = {
  format: 'mp4',
  codec: 'h264',
  fit: 'contain',
  position: 'center',
  background: '#000000',
  quality: 60,
};
const SRC: Pick<ProbeResult, 'kind' | 'duration'> = { kind: 'video', duration: 10 };

const isLimit = (re?: RegExp) => (e: unknown) =>
  isAppError(e) && e.code === 'media_limit_exceeded' && (!re || re.test(e.message));
const check = (out: number, opts: TrimOptions = {}, source = SRC) => checkOutputCap(out, opts, source, LIMIT);

describe('duration cap arguments', () => {
  it('caps the output at the limit minus the start, unless the trim ends first', () => {
    assert.equal(outputCap({ start: 0 }, SRC, LIMIT), 60);
    assert.equal(outputCap({ start: 5 }, SRC, LIMIT), 55);
    assert.deepEqual(cappedLengthArgs({ start: 0 }, 60), ['-t', '60.000']);
    assert.deepEqual(cappedLengthArgs({ start: 5, length: 10 }, 55), ['-t', '10.000']);
    assert.deepEqual(cappedLengthArgs({ start: 5, length: 100 }, 55), ['-t', '55.000']);
    assert.deepEqual(cappedLengthArgs({ start: 0 }, undefined), []);
  });

  it('puts the cap into the video and audio argv as output -t', () => {
    const source: ProbeResult = {
      ...SRC,
      format: 'mkv',
      extension: 'mkv',
      mime: 'video/x-matroska',
      width: 32,
      height: 32,
      hasVideo: true,
      hasAudio: true,
    };
    const v = buildVideoArgs('/in/a.mkv', '/out/b.mp4', VIDEO, source, LIMIT);
    assert.ok(v.indexOf('-t') > v.indexOf('-i'), 'an output option');
    assert.equal(v[v.indexOf('-t') + 1], '60.000');
    const a = buildAudioArgs(
      '/in/a.mkv',
      '/out/b.mp3',
      { format: 'mp3', start: 20 },
      { ...source, duration: 30 },
      LIMIT,
    );
    assert.equal(a[a.indexOf('-t') + 1], '40.000');
  });

  it('refuses before decoding: a stored duration over the limit, a start past it', () => {
    assert.throws(
      () => outputCap({ start: 0 }, { kind: 'video', duration: 300 }, LIMIT),
      isLimit(/is 5 min long; the limit is 1 min \(MEDIAD_MAX_DURATION_SECONDS\)/),
    );
    assert.throws(
      () => outputCap({ start: 60 }, { kind: 'audio', duration: undefined }, LIMIT),
      isLimit(/start \(60\.000 s\) is past/),
    );
  });

  it('stops reading the input at the limit for storyboards (input -t)', () => {
    const a = storyboardArgs('/in/v.mkv', '/out/s.jpg', planStoryboard(10, { count: 5 }, {}), 'jpeg', LIMIT);
    assert.equal(a[a.indexOf('-t') + 1], '60.000');
    assert.ok(a.indexOf('-t') < a.indexOf('-i'), 'an input option');
  });

  it('fails an output that ran into the cap only when the source should have ended before it', () => {
    assert.throws(
      () => check(60),
      isLimit(/^the video goes on past 1 min \(its header says 10 s\); the limit is 1 min/),
    );
    assert.throws(() => check(55, { start: 5 }), isLimit());
    assert.throws(() => check(60, {}, { kind: 'video', duration: undefined }), isLimit(/header gives no length/));
    check(10); // ended where the probe said
    check(60, {}, { kind: 'video', duration: 59.9 }); // as long as the limit: nothing was cut
    check(15, { start: 5, end: 20 }); // the trim, not the cap, ended it
  });
});

describe('decoding the lying file with a header-trusting probe (ffmpeg)', () => {
  let dir = '';
  let liar = '';
  let fooled: ProbeResult;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mediad-cap-'));
    liar = await fixture('video-mkv-lying-duration');
    fooled = await probeFile(liar, NO_LIMITS, { verifyDuration: false });
    assert.equal(fooled.duration, 10);
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('video: the output stops at 60 s, and the run is refused', async () => {
    const out = join(dir, 'v.mp4');
    await runFfmpeg(buildVideoArgs(liar, out, VIDEO, fooled, LIMIT), { timeoutMs: 60_000 });
    const seconds = (await probeFile(out, NO_LIMITS, { verifyDuration: false })).duration!;
    // 60 frames; the AAC track ends within one audio frame (21 ms) of the cut.
    assert.ok(seconds <= 60.05 && seconds >= 59.75, `output ${seconds} s`);
    assert.throws(() => checkOutputCap(seconds, VIDEO, fooled, LIMIT), isLimit(/header says 10 s/));
  });

  it('audio: the output stops at 60 s, and the run is refused', async () => {
    const out = join(dir, 'a.mp3');
    await runFfmpeg(buildAudioArgs(liar, out, { format: 'mp3' }, fooled, LIMIT), { timeoutMs: 60_000 });
    const seconds = (await probeFile(out, NO_LIMITS, { verifyDuration: false })).duration!;
    assert.ok(seconds <= 60.05 && seconds >= 59.75, `output ${seconds} s`);
    assert.throws(() => checkOutputCap(seconds, {}, { kind: 'audio', duration: 10 }, LIMIT), isLimit());
  });

  it('an honest source exactly as long as the limit is not refused', async () => {
    const honest = await fixture('video-mkv-tiny-10s');
    const source = await probeFile(honest, NO_LIMITS);
    const limit = { maxDurationSeconds: 10.25 };
    const out = join(dir, 'honest.mp4');
    await runFfmpeg(buildVideoArgs(honest, out, VIDEO, source, limit), { timeoutMs: 60_000 });
    const seconds = (await probeFile(out, NO_LIMITS, { verifyDuration: false })).duration!;
    checkOutputCap(seconds, VIDEO, source, limit);
    assert.ok(Math.abs(seconds - 10) < 0.1, String(seconds));
  });

  it('image: a frame past the limit is refused; one within it is taken (it exists past the header’s 10 s)', async () => {
    const png = join(dir, 'f.png');
    await assert.rejects(
      grabVideoFrame(liar, 100, png, { timeoutMs: 20_000 }, LIMIT),
      isLimit(/the frame at 100\.000 s is past the duration limit of 1 min \(MEDIAD_MAX_DURATION_SECONDS\)/),
    );
    await grabVideoFrame(liar, 30, png, { timeoutMs: 20_000 }, LIMIT);
  });

  it('thumbnails: the storyboard covers what the probe said and decodes no further', async () => {
    const sb = await buildStoryboard(liar, dir, { count: 5, format: 'jpeg' }, fooled, { timeoutMs: 30_000 }, LIMIT);
    assert.equal(sb.tiles.length, 5);
    assert.equal(sb.tiles.at(-1)!.end, 10);
    // A stored probe over the limit is refused before anything runs.
    await assert.rejects(
      buildStoryboard(liar, dir, { format: 'jpeg' }, { ...fooled, duration: 300 }, { timeoutMs: 30_000 }, LIMIT),
      isLimit(),
    );
  });
});
