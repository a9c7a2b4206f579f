// Hardening issue, points 3 (the probe trusted the header's duration), 7 (a video whose frame size
// ffmpeg rejects was stored without dimensions) and 8 (animated images had no frame limit).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isAppError, type ErrorCode } from '../../src/errors.js';
import {
  chooseDuration,
  DEFAULT_MAX_FRAMES,
  latestEnd,
  measureDuration,
  packetScanArgs,
  packetTime,
  parseCompactLine,
  probeFile,
  TAIL_PACKETS,
  UNSUPPORTED_MESSAGE,
  ffprobeArgs,
} from '../../src/media/index.js';
import { fixture } from '../helpers/fixtures.js';

const LIMITS = { maxPixels: 100_000_000, maxDurationSeconds: 60 };
const WIDE = { ...LIMITS, maxDurationSeconds: 400 };

async function refused(p: Promise<unknown>, code: ErrorCode, ...messages: RegExp[]): Promise<string> {
  const err = await p.then(
    () => assert.fail(`expected ${code}`),
    (e: unknown) => e,
  );
  assert.ok(isAppError(err), `expected AppError ${code}, got ${String(err)}`);
  assert.equal(err.code, code, err.message);
  for (const m of messages) assert.match(err.message, m);
  return err.message;
}

describe('the lying Matroska fixture', () => {
  it('declares 10 s in its header (what the probe used to report)', async () => {
    const header = await probeFile(await fixture('video-mkv-lying-duration'), LIMITS, { verifyDuration: false });
    assert.equal(header.duration, 10);
  });
});

describe('probe: the declared duration is checked against the packets', () => {
  it('refuses a file whose header says 10 s but holds 300 s, under a 60 s limit', async () => {
    await refused(
      probeFile(await fixture('video-mkv-lying-duration'), LIMITS),
      'media_limit_exceeded',
      /^the video goes on past /,
      /\(its header says 10 s\)/,
      /the limit is 1 min \(MEDIAD_MAX_DURATION_SECONDS\)$/,
    );
  });

  it('reports the measured 300 s, not the declared 10 s, when the limit allows it', async () => {
    const probe = await probeFile(await fixture('video-mkv-lying-duration'), WIDE);
    assert.ok(Math.abs(probe.duration! - 300) < 0.1, `duration ${probe.duration}`);
  });

  it('measures a live-muxed file that declares no duration and has no cues', async () => {
    const path = await fixture('video-mkv-no-duration');
    assert.equal(
      (await probeFile(path, LIMITS, { verifyDuration: false })).duration,
      undefined,
      'no duration in the header',
    );
    await refused(
      probeFile(path, LIMITS),
      'media_limit_exceeded',
      /\(its header gives no length\)/,
      /MEDIAD_MAX_DURATION_SECONDS/,
    );
    const probe = await probeFile(path, WIDE);
    assert.ok(Math.abs(probe.duration! - 300) < 0.1, `duration ${probe.duration}`);
  });

  it('keeps the declared duration of honest files', async () => {
    for (const name of ['video-mkv-tiny-10s', 'video-mp4', 'video-webm', 'audio-mp3', 'audio-wav'] as const) {
      const path = await fixture(name);
      const header = await probeFile(path, LIMITS, { verifyDuration: false });
      assert.equal((await probeFile(path, LIMITS)).duration, header.duration, name);
    }
  });

  it('scans the packets when the tail read does not reach the end (no seek, e.g. a demuxer that cannot)', async () => {
    const path = await fixture('video-mkv-lying-duration');
    const facts = { declared: 10, startTime: 0, tail: undefined, streams: new Set([0, 1]) };
    const whole = await measureDuration(path, facts, 400);
    assert.ok(whole.measured && !whole.atLeast && Math.abs(whole.seconds! - 300) < 0.1, JSON.stringify(whole));
    // Under a 60 s limit the scan stops at the first packet past 61 s instead of reading on.
    const bounded = await measureDuration(path, facts, 60);
    assert.ok(bounded.measured && bounded.atLeast, JSON.stringify(bounded));
    assert.ok(bounded.seconds! >= 61 && bounded.seconds! < 63, String(bounded.seconds));
  });
});

describe('duration check helpers', () => {
  it('asks ffprobe for the tail in the same run, seeking to the limit', () => {
    const args = ffprobeArgs('/in/x', 60);
    assert.equal(args[args.indexOf('-read_intervals') + 1], `60.000%+#${TAIL_PACKETS}`);
    assert.ok(args.includes('-show_format') && args.includes('-show_streams'));
    assert.ok(!ffprobeArgs('/in/x').includes('-read_intervals'));
    // A seek past the filesystem's largest offset would make PCM WAV read the whole file.
    assert.equal(
      ffprobeArgs('/in/x', 1e12)[ffprobeArgs('/in/x', 1e12).indexOf('-read_intervals') + 1],
      `1000000.000%+#${TAIL_PACKETS}`,
    );
  });

  it('scans from a time, or from the start without seeking, to a bound', () => {
    const from = packetScanArgs('/in/x', 12.5, 61);
    assert.equal(from[from.indexOf('-read_intervals') + 1], '12.500%61.000');
    const start = packetScanArgs('/in/x', undefined, 61);
    assert.equal(start[start.indexOf('-read_intervals') + 1], '%61.000');
    assert.deepEqual(start.slice(-2), ['-i', 'file:/in/x']);
  });

  it('parses packet entries and finds the latest end among audio and video', () => {
    assert.deepEqual(parseCompactLine('stream_index=1|pts_time=2.5|dts_time=N/A|duration_time=0.02|'), {
      stream_index: '1',
      pts_time: '2.5',
      dts_time: 'N/A',
      duration_time: '0.02',
    });
    const packets = [
      packetTime({ stream_index: 0, pts_time: '9.0', duration_time: '1.0' }),
      packetTime({ stream_index: 1, pts_time: 'N/A', dts_time: '9.98', duration_time: '0.02' }),
      packetTime({ stream_index: 2, pts_time: '3600' }), // a subtitle: not decoded, not counted
    ].filter((p) => p !== null);
    assert.equal(latestEnd(packets, new Set([0, 1])), 10);
    assert.equal(latestEnd([], new Set([0])), undefined);
    assert.equal(packetTime({ pts_time: '1' }), null);
  });

  it('trusts the header unless the packets go on past it', () => {
    assert.deepEqual(chooseDuration(10, 10.3), { seconds: 10, measured: false, atLeast: false });
    assert.deepEqual(chooseDuration(10, 300), { seconds: 300, measured: true, atLeast: false });
    assert.deepEqual(chooseDuration(undefined, 42, true), { seconds: 42, measured: true, atLeast: true });
    // Packets that end early do not shorten it: the seek may simply have found nothing.
    assert.deepEqual(chooseDuration(10, 2), { seconds: 10, measured: false, atLeast: false });
    assert.deepEqual(chooseDuration(10, undefined), { seconds: 10, measured: false, atLeast: false });
  });
});

describe('probe: undecodable frame sizes', () => {
  it('refuses a video whose frame size ffmpeg rejects (60000x60000 probes as 0x0)', async () => {
    await refused(
      probeFile(await fixture('video-mkv-undecodable-size'), LIMITS),
      'media_unsupported',
      new RegExp(`^${UNSUPPORTED_MESSAGE}$`),
    );
  });
});

describe('probe: frames of animated images', () => {
  it(`refuses 200,000 frames of 1x1 by the default limit (${DEFAULT_MAX_FRAMES}), from the header`, async () => {
    const path = await fixture('image-gif-200k-frames');
    await refused(
      probeFile(path, LIMITS),
      'media_limit_exceeded',
      /^the animated image has 200000 frames; the limit is 10000 \(MEDIAD_MAX_FRAMES\)$/,
    );
    await refused(probeFile(path, { ...LIMITS, maxFrames: 199_999 }), 'media_limit_exceeded', /limit is 199999/);
    assert.equal((await probeFile(path, { ...LIMITS, maxFrames: 200_000 })).frames, 200_000);
  });

  it('counts frames against the limit exactly, and keeps the pixel limit over all frames', async () => {
    const path = await fixture('image-gif-animated'); // 10 frames of 160x120
    assert.equal((await probeFile(path, { ...LIMITS, maxFrames: 10 })).frames, 10);
    await refused(
      probeFile(path, { ...LIMITS, maxFrames: 9 }),
      'media_limit_exceeded',
      /has 10 frames; the limit is 9/,
    );
    await refused(
      probeFile(path, { ...LIMITS, maxPixels: 191_999 }),
      'media_limit_exceeded',
      /with 10 frames .*\(MEDIAD_MAX_PIXELS\)$/,
    );
  });
});
