// Subtitle cues from word times, the WebVTT/SRT writers and the validator; the last case runs on
// real recognised speech.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import webvtt from 'webvtt-parser';
import {
  CUE_DEFAULTS,
  cuesFromWords,
  formatTimestamp,
  parseSubtitles,
  toSrt,
  toVtt,
  transcribeLocal,
  wrapLines,
  type TimedWord,
} from '../../src/ai/index.js';
import { spokenParagraph } from '../helpers/ai-fixtures.js';

/** Words of `text` one after another, `step` s each, with a `gap` s pause after every `every` words. */
function timed(text: string, step = 0.3, every = Infinity, gap = 1.2): TimedWord[] {
  let t = 0.5;
  return text.split(' ').map((w, i) => {
    if (i > 0 && i % every === 0) t += gap;
    const word = { text: w, start: t, end: t + step * 0.8 };
    t += step;
    return word;
  });
}

const LONG =
  'mediad stores media files and derives new ones from them behind one HTTPS JSON API and this sentence keeps going so that the cue builder has to split it into several cues of two lines each without losing a single word along the way.';

describe('cuesFromWords', () => {
  it('keeps every word, at most two lines of 42 characters, 1-7 s per cue', () => {
    const words = timed(LONG);
    const cues = cuesFromWords(words, { mediaDuration: 60 });
    assert.ok(cues.length >= 3, `${cues.length} cues`);
    assert.equal(cues.flatMap((c) => c.lines).join(' '), words.map((w) => w.text).join(' '));
    for (const c of cues) {
      assert.ok(c.lines.length >= 1 && c.lines.length <= CUE_DEFAULTS.maxLines, JSON.stringify(c));
      assert.ok(
        c.lines.every((l) => l.length <= CUE_DEFAULTS.maxLineLength),
        JSON.stringify(c),
      );
      assert.ok(
        c.end - c.start >= CUE_DEFAULTS.minDuration - 1e-9 && c.end - c.start <= CUE_DEFAULTS.maxDuration + 1e-9,
        JSON.stringify(c),
      );
    }
    cues.slice(1).forEach((c, i) => assert.ok(c.start >= cues[i]!.end, 'cues overlap'));
  });

  it('starts a new cue at a pause and after a sentence', () => {
    const words = timed('one two three four five six seven eight', 0.3, 4, 1.5);
    const cues = cuesFromWords(words);
    assert.deepEqual(
      cues.map((c) => c.lines.join(' ')),
      ['one two three four', 'five six seven eight'],
    );
    const sentences = cuesFromWords(timed('This is the first sentence here. And this is another one.'));
    assert.deepEqual(
      sentences.map((c) => c.lines.join(' ')),
      ['This is the first sentence here.', 'And this is another one.'],
    );
  });

  it('extends short cues into silence but never past the next cue or the media', () => {
    const cues = cuesFromWords(
      [
        { text: 'hi', start: 1, end: 1.2 },
        { text: 'there', start: 3, end: 3.1 },
      ],
      { mediaDuration: 3.5 },
    );
    assert.deepEqual(
      cues.map((c) => [c.start, c.end]),
      [
        [1, 2],
        [3, 3.5],
      ],
    );
  });

  it('balances two lines', () => {
    assert.deepEqual(wrapLines('the quick brown fox jumps over the lazy dog and runs away'.split(' '), 42, 2), [
      'the quick brown fox jumps over',
      'the lazy dog and runs away',
    ]);
    assert.equal(wrapLines(LONG.split(' '), 42, 2), null);
  });
});

describe('WebVTT and SRT writers', () => {
  const cues = cuesFromWords(
    timed(
      'Fish & chips <b>cost</b> more --> than before. Then there were two lines of text to show here for everyone.',
    ),
    { mediaDuration: 30 },
  );

  it('formats times for each format', () => {
    assert.equal(formatTimestamp(3661.5, 'vtt'), '01:01:01.500');
    assert.equal(formatTimestamp(3661.5, 'srt'), '01:01:01,500');
    assert.equal(formatTimestamp(59.9996, 'vtt'), '00:01:00.000');
    assert.equal(formatTimestamp(-1, 'srt'), '00:00:00,000');
  });

  it('writes WebVTT that an independent parser and our validator read back', () => {
    const vtt = toVtt(cues);
    assert.match(vtt, /^WEBVTT\n\n\d{2}:\d{2}:\d{2}\.\d{3} --> \d{2}:\d{2}:\d{2}\.\d{3}\n/);
    assert.match(vtt, /Fish &amp; chips &lt;b&gt;cost&lt;\/b&gt;\smore → than/);
    const parsed = new webvtt.WebVTTParser().parse(vtt, 'subtitles');
    assert.deepEqual(parsed.errors, []);
    assert.equal(parsed.cues.length, cues.length);
    parsed.cues.forEach((c, i) =>
      assert.ok(Math.abs(c.startTime - cues[i]!.start) < 0.001 && Math.abs(c.endTime - cues[i]!.end) < 0.001),
    );
    const ours = parseSubtitles(vtt, 'vtt', { maxLineLength: 42, maxLines: 2, mediaDuration: 30 });
    assert.deepEqual(ours.problems, []);
    assert.equal(ours.cues[0]!.lines.join(' '), 'Fish & chips <b>cost</b> more → than before.');
  });

  it('writes SRT numbered from 1 with comma decimals', () => {
    const srt = toSrt(cues);
    const blocks = srt.trim().split('\n\n');
    assert.equal(blocks.length, cues.length);
    blocks.forEach((b, i) => {
      const [n, timing] = b.split('\n');
      assert.equal(n, String(i + 1));
      assert.match(timing!, /^\d{2}:\d{2}:\d{2},\d{3} --> \d{2}:\d{2}:\d{2},\d{3}$/);
    });
    assert.deepEqual(parseSubtitles(srt, 'srt', { maxLineLength: 42, maxLines: 2, mediaDuration: 30 }).problems, []);
  });
});

describe('parseSubtitles (validator)', () => {
  it('finds what breaks the format or the rules', () => {
    const problems = (text: string, format: 'vtt' | 'srt') =>
      parseSubtitles(text, format, { maxLineLength: 10, maxLines: 1, mediaDuration: 5 }).problems.join(' | ');
    assert.match(problems('00:00:01.000 --> 00:00:02.000\nhi\n', 'vtt'), /WEBVTT/);
    assert.match(problems('WEBVTT\n\n00:00:02.000 --> 00:00:01.000\nhi\n', 'vtt'), /ends .* before it starts/);
    assert.match(problems('WEBVTT\n\n00:00:01,000 --> 00:00:02,000\nhi\n', 'vtt'), /bad timing line/);
    assert.match(
      problems('WEBVTT\n\n00:00:01.000 --> 00:00:03.000\na\n\n00:00:02.000 --> 00:00:04.000\nb\n', 'vtt'),
      /before the previous cue ends/,
    );
    assert.match(problems('WEBVTT\n\n00:00:01.000 --> 00:00:06.000\nhi\n', 'vtt'), /after the media/);
    assert.match(
      problems('WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nthis line is too long\n', 'vtt'),
      /line of 21 characters/,
    );
    assert.match(problems('WEBVTT\n\n00:00:01.000 --> 00:00:02.000\none\ntwo\n', 'vtt'), /2 lines/);
    assert.match(problems('2\n00:00:01,000 --> 00:00:02,000\nhi\n', 'srt'), /expected the number 1/);
    assert.match(problems('1\n00:00:01.000 --> 00:00:02.000\nhi\n', 'srt'), /bad timing line/);
  });
});

describe('subtitles from recognised speech', () => {
  it('gives valid cues inside the media for both formats', async () => {
    const work = await mkdtemp(join(tmpdir(), 'mediad-ai-subs-'));
    try {
      const wav = await spokenParagraph(
        [
          'Good morning everyone and welcome to the weekly meeting.',
          'Please open the window and let some fresh air into the room.',
        ],
        1,
      );
      const speech = await transcribeLocal(wav, { workDir: work });
      const cues = cuesFromWords(speech.words, { mediaDuration: speech.duration });
      assert.ok(cues.length >= 2, `${cues.length} cues`);
      for (const format of ['vtt', 'srt'] as const) {
        const text = format === 'vtt' ? toVtt(cues) : toSrt(cues);
        const back = parseSubtitles(text, format, { maxLineLength: 42, maxLines: 2, mediaDuration: speech.duration });
        assert.deepEqual(back.problems, [], text);
        assert.equal(back.cues.flatMap((c) => c.lines).join(' '), speech.words.map((w) => w.text).join(' '));
        assert.ok(back.cues.every((c) => c.start >= 0 && c.end <= speech.duration + 0.001));
      }
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });
});
