import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  crfFor,
  failureLine,
  isMediaTransformError,
  ProcessError,
  ProgressParser,
  qualityToNumber,
  runFfmpeg,
  runProcess,
} from '../../src/media/index.js';

describe('quality', () => {
  it('maps named levels and clamps numbers', () => {
    assert.deepEqual(
      (['very_low', 'low', 'medium', 'high', 'very_high'] as const).map(qualityToNumber),
      [20, 40, 60, 80, 95],
    );
    assert.equal(qualityToNumber(0), 1);
    assert.equal(qualityToNumber(150), 100);
    assert.equal(qualityToNumber(72.4), 72);
  });

  it('maps quality linearly onto each codec CRF range', () => {
    assert.deepEqual([crfFor('h264', 100), crfFor('h264', 1), crfFor('h264', 60)], [16, 40, 26]);
    assert.deepEqual([crfFor('h265', 100), crfFor('h265', 1), crfFor('h265', 60)], [18, 43, 28]);
    assert.deepEqual([crfFor('vp9', 100), crfFor('vp9', 1), crfFor('vp9', 60)], [15, 55, 31]);
    assert.deepEqual([crfFor('av1', 100), crfFor('av1', 1), crfFor('av1', 60)], [20, 55, 34]);
    for (let q = 2; q <= 100; q++) assert.ok(crfFor('h264', q) <= crfFor('h264', q - 1));
  });
});

describe('ProgressParser', () => {
  function setup(expected: number | undefined) {
    let now = 0;
    const seen: number[] = [];
    const p = new ProgressParser(
      expected,
      (v) => seen.push(v),
      () => now,
    );
    return { seen, p, advance: (ms: number) => void (now += ms) };
  }

  it('reports monotonic integer percents, throttled, and 100 at the end', () => {
    const { seen, p, advance } = setup(10);
    p.line('out_time_us=N/A');
    p.line('out_time_us=1000000');
    p.line('out_time_ms=2000000'); // same 250 ms window: dropped
    advance(300);
    p.line('out_time_us=2500000');
    advance(300);
    p.line('out_time_us=500000'); // going back never lowers the value
    advance(300);
    p.line('out_time_us=99000000'); // past the expected length: held at 99 until the end
    p.line('progress=end');
    p.finish();
    assert.deepEqual(seen, [10, 25, 99, 100]);
  });

  it('reports only the final 100 when the length is unknown', () => {
    const { seen, p } = setup(undefined);
    p.line('out_time_us=5000000');
    p.line('frame=12');
    p.finish();
    assert.deepEqual(seen, [100]);
  });
});

describe('runProcess onStdoutLine', () => {
  it('streams stdout lines, the last one even without a newline, and keeps none', async () => {
    const lines: string[] = [];
    const res = await runProcess('sh', ['-c', 'printf "a=1\\nb=2\\r\\n"; sleep 0.05; printf "c=3"'], {
      timeoutMs: 5000,
      maxOutputBytes: 1,
      onStdoutLine: (l) => lines.push(l),
    });
    assert.deepEqual(lines, ['a=1', 'b=2', 'c=3']);
    assert.equal(res.stdout.length, 0);
  });
});

describe('runFfmpeg', () => {
  it('turns an ffmpeg failure into transform_failed with the last stderr line, paths removed', async () => {
    const err = await runFfmpeg(['-v', 'error', '-i', 'file:/nonexistent/input.mp4', '-f', 'null', '-'], {
      timeoutMs: 10_000,
    }).then(
      () => assert.fail('expected a failure'),
      (e: unknown) => e,
    );
    assert.ok(isMediaTransformError(err), String(err));
    assert.equal(err.code, 'transform_failed');
    assert.match(err.message, /^ffmpeg failed: .*No such file or directory/);
    assert.doesNotMatch(err.message, /nonexistent/);
    assert.ok(err.cause instanceof ProcessError);
  });

  it('rethrows timeouts and aborts as ProcessError', async () => {
    const endless = ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=64x64:duration=60', '-f', 'null', '-'];
    const timeout = await runFfmpeg(endless, { timeoutMs: 300 }).catch((e: unknown) => e);
    assert.ok(timeout instanceof ProcessError && timeout.reason === 'timeout', String(timeout));
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const aborted = await runFfmpeg(endless, { timeoutMs: 10_000, signal: ac.signal }).catch((e: unknown) => e);
    assert.ok(aborted instanceof ProcessError && aborted.reason === 'aborted', String(aborted));
  });

  it('streams -progress from stdout', async () => {
    const seen: number[] = [];
    const args = [
      '-v',
      'error',
      '-progress',
      'pipe:1',
      '-nostats',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=64x64:duration=3',
      '-f',
      'null',
      '-',
    ];
    await runFfmpeg(args, { timeoutMs: 20_000, expectedDurationSeconds: 3, onProgress: (v) => seen.push(v) });
    assert.equal(seen.at(-1), 100);
    assert.ok(
      seen.every((v, i) => i === 0 || v > seen[i - 1]!),
      seen.join(),
    );
  });

  it('failureLine keeps the message and hides absolute paths', () => {
    assert.equal(failureLine('a\nfile:/tmp/x/in.mp4: Invalid data found\n'), '<file>: Invalid data found');
    assert.equal(failureLine("Error opening '/tmp/a b' ratio 1/2"), "Error opening '<file> b' ratio 1/2");
  });
});
