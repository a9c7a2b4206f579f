import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ffprobeArgs, formatSeconds, frameGrabArgs } from '../../src/media/ffprobe-args.js';
import {
  ANALYZE_DURATION_US,
  DEMUXER_WHITELIST,
  ffmpegPreamble,
  fileUrl,
  inputHardeningArgs,
  PROBE_SIZE_BYTES,
} from '../../src/media/ffmpeg-preamble.js';

/** Value following `flag`, asserting the flag is present. */
function valueOf(args: string[], flag: string): string {
  const i = args.indexOf(flag);
  assert.ok(i >= 0, `${flag} missing from ${args.join(' ')}`);
  const v = args[i + 1];
  assert.ok(v !== undefined, `${flag} has no value`);
  return v;
}

describe('ffprobeArgs', () => {
  const args = ffprobeArgs('/data/in/upload.bin');

  it('asks for quiet JSON with format and streams', () => {
    assert.equal(valueOf(args, '-v'), 'error');
    assert.equal(valueOf(args, '-print_format'), 'json');
    assert.ok(args.includes('-show_format'));
    assert.ok(args.includes('-show_streams'));
  });

  it('bounds how much of the input is read while probing', () => {
    assert.equal(Number(valueOf(args, '-probesize')), PROBE_SIZE_BYTES);
    assert.equal(Number(valueOf(args, '-analyzeduration')), ANALYZE_DURATION_US);
    assert.ok(PROBE_SIZE_BYTES <= 50_000_000 && ANALYZE_DURATION_US <= 60_000_000);
  });

  it('allows local files and the listed demuxers only (no playlists, no network)', () => {
    assert.equal(valueOf(args, '-protocol_whitelist'), 'file');
    const demuxers = valueOf(args, '-format_whitelist').split(',');
    assert.equal(demuxers.join(','), DEMUXER_WHITELIST.join(','));
    for (const risky of ['hls', 'concat', 'image2', 'tty', 'lavfi']) assert.ok(!demuxers.includes(risky), risky);
  });

  it('passes the input last as a file: URL, after every option', () => {
    assert.equal(args.at(-2), '-i');
    assert.equal(args.at(-1), 'file:/data/in/upload.bin');
    assert.ok(args.indexOf('-format_whitelist') < args.indexOf('-i'));
  });
});

describe('fileUrl', () => {
  it('keeps names that look like options or protocols as plain files', () => {
    assert.equal(fileUrl('-version'), 'file:-version');
    assert.equal(fileUrl('http://example.com/x'), 'file:http://example.com/x');
    assert.equal(fileUrl('file:/a/b.mp4'), 'file:/a/b.mp4');
  });
});

describe('formatSeconds', () => {
  it('formats with millisecond precision and clamps nonsense to 0', () => {
    assert.equal(formatSeconds(1), '1.000');
    assert.equal(formatSeconds(0.12345), '0.123');
    assert.equal(formatSeconds(-3), '0.000');
    assert.equal(formatSeconds(Number.NaN), '0.000');
    assert.equal(formatSeconds(Number.POSITIVE_INFINITY), '0.000');
  });
});

describe('frameGrabArgs', () => {
  const args = frameGrabArgs('/m/in.mp4', 1.5, '/tmp/out.png', 64);

  it('seeks before the input (fast keyframe seek)', () => {
    const ss = args.indexOf('-ss');
    assert.ok(ss >= 0 && ss < args.indexOf('-i'));
    assert.equal(args[ss + 1], '1.500');
    assert.equal(valueOf(args, '-i'), 'file:/m/in.mp4');
  });

  it('applies the same input hardening as ffprobe', () => {
    assert.equal(valueOf(args, '-protocol_whitelist'), 'file');
    assert.equal(valueOf(args, '-format_whitelist'), DEMUXER_WHITELIST.join(','));
    assert.ok(args.includes('-nostdin'));
  });

  it('takes one frame of the first real video stream, no audio', () => {
    assert.equal(valueOf(args, '-frames:v'), '1');
    assert.equal(valueOf(args, '-map'), '0:V:0');
    assert.ok(args.includes('-an'));
  });

  it('scales down to maxWidth without upscaling and writes PNG', () => {
    const vf = valueOf(args, '-vf');
    assert.match(vf, /scale=w='min\(iw,64\)'/);
    assert.match(vf, /format=rgb24/);
    assert.equal(valueOf(args, '-c:v'), 'png');
    assert.equal(args.at(-1), 'file:/tmp/out.png');
    assert.ok(args.includes('-y'));
  });

  it("writes to stdout for '-'", () => {
    assert.equal(frameGrabArgs('/m/in.mp4', 0, '-', 32).at(-1), 'pipe:1');
  });

  it('rounds the width and clamps bad seek times', () => {
    const other = frameGrabArgs('/m/in.mp4', -1, '-', 99.7);
    assert.equal(valueOf(other, '-ss'), '0.000');
    assert.match(valueOf(other, '-vf'), /min\(iw,99\)/);
  });
});

describe('ffmpegPreamble', () => {
  it('opens every run quietly, without stdin, with the input guards', () => {
    assert.deepEqual(ffmpegPreamble(), [
      '-hide_banner',
      '-nostdin',
      '-y',
      '-loglevel',
      'error',
      ...inputHardeningArgs(),
    ]);
  });

  it('adds progress on stdout, and leaves out what a run does not want', () => {
    const a = ffmpegPreamble({ progress: true, overwrite: false, loglevel: 'info', untrustedInput: false });
    assert.deepEqual(a, ['-hide_banner', '-nostdin', '-loglevel', 'info', '-progress', 'pipe:1', '-nostats']);
  });
});
