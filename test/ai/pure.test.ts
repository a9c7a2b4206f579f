// Pure parts of the engines: output parsers, chunk planning, segmenting, languages, retry hints.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePocketsphinxLine, parseScdetLine, parseTesseractTsv } from '../../src/media/index.js';
import {
  endpointUrl,
  groupWords,
  languageCode,
  mergeCloseCuts,
  parseRetryAfter,
  progressReporter,
  redactSecret,
  transcriptText,
} from '../../src/ai/index.js';
import { chunksFromCuts, chunkTargets, quietestTime } from '../../src/ai/speech/chunks.js';

describe('tool output parsers', () => {
  it('pocketsphinx: words kept, fillers and hypothesis lines dropped, variants stripped, confidence clamped', () => {
    assert.deepEqual(parsePocketsphinxLine('to(2) 4.770 4.940 0.851787'), {
      word: 'to',
      start: 4.77,
      end: 4.94,
      confidence: 0.851787,
    });
    assert.equal(parsePocketsphinxLine('fox 0.920 1.290 1.000100')?.confidence, 1);
    for (const line of [
      '<s> 0.090 0.150 0.999700',
      '</s> 6.0 6.08 1.0',
      '<sil> 1 2 0.5',
      '[NOISE] 1 2 0.5',
      '++UH++ 1 2 0.3',
      'the quick brown fox jumped over',
    ]) {
      assert.equal(parsePocketsphinxLine(line), null, line);
    }
  });

  it('tesseract TSV: word rows with text and confidence', () => {
    const tsv = [
      'level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext',
      '1\t1\t0\t0\t0\t0\t0\t0\t640\t360\t-1\t',
      '5\t1\t1\t1\t1\t1\t157\t161\t326\t37\t95.904251\tIntroduction',
      '5\t1\t1\t1\t1\t2\t500\t161\t20\t37\t12.5\t~',
    ].join('\n');
    const words = parseTesseractTsv(tsv);
    assert.equal(words.length, 2);
    assert.deepEqual(
      { ...words[0], confidence: Math.round(words[0]!.confidence * 100) },
      {
        text: 'Introduction',
        confidence: 96,
        block: 1,
        paragraph: 1,
        line: 1,
        left: 157,
        top: 161,
        width: 326,
        height: 37,
      },
    );
  });

  it('scdet log lines', () => {
    assert.deepEqual(parseScdetLine('[scdet @ 0x5634] lavfi.scd.score: 31.502, lavfi.scd.time: 2'), {
      time: 2,
      score: 31.502,
    });
    assert.equal(parseScdetLine('[Parsed_metadata_1 @ 0x5] lavfi.scd.time=2'), null);
    assert.deepEqual(
      mergeCloseCuts(
        [
          { time: 1, score: 10 },
          { time: 1.2, score: 40 },
          { time: 5, score: 20 },
        ],
        0.5,
      ),
      [
        { time: 1.2, score: 40 },
        { time: 5, score: 20 },
      ],
    );
  });
});

describe('speech chunking', () => {
  it('targets every chunkSeconds, never splitting off a short tail', () => {
    assert.deepEqual(chunkTargets(100, { chunkSeconds: 120 }), []);
    assert.deepEqual(chunkTargets(149, { chunkSeconds: 120 }), []);
    assert.deepEqual(
      chunkTargets(400, { chunkSeconds: 120 }).map((t) => t.target),
      [120, 240, 360],
    );
    assert.deepEqual(
      chunkTargets(365, { chunkSeconds: 120 }).map((t) => t.target),
      [120, 240],
    );
    assert.deepEqual(chunksFromCuts(10, [3, 7]), [
      { start: 0, end: 3 },
      { start: 3, end: 7 },
      { start: 7, end: 10 },
    ]);
  });

  it('finds the quiet moment nearest the target', () => {
    const rate = 1000;
    const samples = new Int16Array(10 * rate).map((_, i) => (Math.sin(i) * 8000) | 0);
    // Two silences: 2.0-2.6 s and 6.0-7.0 s; the target 5 s is nearer the second.
    samples.fill(0, 2 * rate, 2.6 * rate);
    samples.fill(0, 6 * rate, 7 * rate);
    const t = quietestTime(samples, rate, 100, 105);
    assert.ok(t >= 106.1 && t <= 106.9, `cut at ${t}`);
    assert.ok(Math.abs(quietestTime(samples, rate, 100, 102) - 102.3) < 0.2);
  });

  it('groups words into segments at pauses and at a length limit', () => {
    const w = (text: string, start: number) => ({ text, start, end: start + 0.3, confidence: 0.5 });
    const segs = groupWords([w('a', 0), w('b', 0.4), w('c', 2), w('d', 2.4)]);
    assert.deepEqual(
      segs.map((s) => s.text),
      ['a b', 'c d'],
    );
    const long = groupWords(
      Array.from({ length: 40 }, (_, i) => w(`w${i}`, i * 0.45)),
      { maxSeconds: 5 },
    );
    assert.ok(long.every((s) => s.end - s.start <= 5.3));
  });
});

describe('small helpers', () => {
  it('languageCode', () => {
    assert.deepEqual(['english', 'English', 'en', 'en-US', 'german', 'klingon', 42].map(languageCode), [
      'en',
      'en',
      'en',
      'en',
      'de',
      null,
      null,
    ]);
  });

  it('parseRetryAfter', () => {
    assert.equal(parseRetryAfter('7'), 7000);
    assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')), 10_000);
    assert.equal(parseRetryAfter('soon'), undefined);
  });

  it('endpointUrl keeps the base path', () => {
    assert.equal(
      endpointUrl('http://127.0.0.1:8080/v1/', '/chat/completions'),
      'http://127.0.0.1:8080/v1/chat/completions',
    );
  });

  it('redactSecret', () => {
    assert.equal(redactSecret('key sk-abc123 and sk-abc123', 'sk-abc123'), 'key [redacted] and [redacted]');
  });

  it('progressReporter: increasing integers, throttled, 100 only at the end, a throwing callback ignored', () => {
    let now = 0;
    const seen: number[] = [];
    const p = progressReporter(
      (v) => {
        seen.push(v);
        throw new Error('ignored');
      },
      250,
      () => now,
    );
    p.report(0.1);
    now += 100;
    p.report(0.2); // too soon
    now += 300;
    p.report(0.05); // not higher than 10
    p.report(1);
    now += 300;
    p.report(1);
    p.done();
    assert.deepEqual(seen, [10, 99, 100]);
  });

  it('transcriptText shortens long transcripts keeping both ends', () => {
    const segs = Array.from({ length: 2000 }, (_, i) => ({ start: i, end: i + 1, text: `sentence number ${i}` }));
    const text = transcriptText(segs, 2000);
    assert.ok(text.length < 2100);
    assert.match(text, /^\[00:00:00\] sentence number 0/);
    assert.match(text, /sentence number 1999$/);
  });
});
