import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildAdaptiveArgs,
  defaultBitrate,
  ladderProblems,
  manifestDuration,
  masterVariants,
  normalizeMaster,
  normalizeMediaPlaylist,
  packageEntryMime,
  playlistUris,
  resolveLadder,
  rewriteManifest,
  rewritePlaylist,
  segmentDurations,
  type ProbeResult,
} from '../../src/media/index.js';
import { packageEntryKey, packageKey, packageOwner } from '../../src/storage/keys.js';

const source: ProbeResult = {
  kind: 'video',
  format: 'mp4',
  extension: 'mp4',
  mime: 'video/mp4',
  width: 1920,
  height: 1080,
  duration: 60,
  fps: 25,
  hasVideo: true,
  hasAudio: true,
};

const after = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

describe('adaptive ladder', () => {
  it('defaults to the table’s rungs at or below the source height, scaled per codec', () => {
    assert.deepEqual(
      resolveLadder(undefined, 1080, 'h264').map((r) => [r.height, r.bitrate]),
      [
        [1080, 5_000_000],
        [720, 2_800_000],
        [480, 1_400_000],
        [360, 800_000],
        [240, 400_000],
      ],
    );
    assert.deepEqual(
      resolveLadder(undefined, 500, 'h265').map((r) => [r.height, r.bitrate]),
      [
        [480, 910_000],
        [360, 520_000],
        [240, 260_000],
      ],
    );
    assert.deepEqual(resolveLadder(undefined, 720, 'av1')[0], { height: 720, bitrate: 1_540_000 });
    // Smaller than the lowest rung: one rung at the source's own (even) height.
    assert.deepEqual(resolveLadder(undefined, 181, 'h264'), [{ height: 182, bitrate: defaultBitrate(181, 'h264') }]);
  });

  it('fills in bitrates of the rungs asked for and sorts them highest first', () => {
    assert.deepEqual(resolveLadder([{ height: 240 }, { height: 720, bitrate: 2_000_000 }], 1080, 'h264'), [
      { height: 720, bitrate: 2_000_000 },
      { height: 240, bitrate: 400_000 },
    ]);
    assert.equal(defaultBitrate(600, 'h264'), 1_400_000);
    assert.equal(defaultBitrate(200, 'h264'), 333_000);
  });

  it('names a rung above the source height', () => {
    assert.deepEqual(ladderProblems([{ height: 720 }, { height: 1440 }], 1080), [
      { field: 'ladder[1].height', message: "1440 is above the source's height of 1080" },
    ]);
    assert.deepEqual(ladderProblems(undefined, 1080), []);
  });
});

describe('buildAdaptiveArgs', () => {
  const ladder = resolveLadder(undefined, 720, 'h264');
  const args = buildAdaptiveArgs('/in/a.mp4', '/out', { ladder, codec: 'h264', segmentSeconds: 4 }, source, {
    maxDurationSeconds: 3600,
  });

  it('is one run: split and scale per rung, one shared AAC rendition, the DASH muxer with HLS playlists', () => {
    assert.equal(
      after(args, '-filter_complex'),
      '[0:V:0]split=4[s0][s1][s2][s3];[s0]scale=-2:720,format=yuv420p[v0];[s1]scale=-2:480,format=yuv420p[v1];' +
        '[s2]scale=-2:360,format=yuv420p[v2];[s3]scale=-2:240,format=yuv420p[v3]',
    );
    assert.deepEqual(
      args.filter((a, i) => args[i - 1] === '-map'),
      ['[v0]', '[v1]', '[v2]', '[v3]', '0:a:0'],
    );
    assert.equal(after(args, '-b:v:0'), '2800000');
    assert.equal(after(args, '-maxrate:v:3'), '440000');
    assert.equal(after(args, '-c:a'), 'aac');
    assert.equal(after(args, '-f'), 'dash');
    assert.equal(after(args, '-hls_playlist'), '1');
    assert.equal(after(args, '-seg_duration'), '4');
    assert.equal(after(args, '-adaptation_sets'), 'id=0,streams=v id=1,streams=a');
    assert.equal(args.at(-1), 'file:/out/manifest.mpd');
    assert.equal(after(args, '-t'), '3600.000', 'the duration cap applies');
    assert.equal(args.filter((a) => a === '-i').length, 1);
    assert.ok(
      args.indexOf('-xerror') >= 0 && args.indexOf('-xerror') < args.indexOf('-i'),
      'a decode error stops the run',
    );
  });

  it('aligns keyframes: closed GOPs of one segment, no scene cuts, keyframes forced at boundaries', () => {
    assert.equal(after(args, '-g'), '100'); // 25 fps × 4 s
    assert.equal(after(args, '-keyint_min'), '100');
    assert.equal(after(args, '-sc_threshold'), '0');
    assert.equal(after(args, '-flags'), '+cgop');
    assert.equal(after(args, '-force_key_frames:v'), 'expr:gte(t,n_forced*4)');
  });

  it('has no audio rendition for a silent source, and per-codec keyframe settings', () => {
    const silent = buildAdaptiveArgs(
      '/in/a.mp4',
      '/out',
      { ladder: [{ height: 240, bitrate: 300_000 }], codec: 'h265', segmentSeconds: 2 },
      { ...source, hasAudio: false, fps: undefined },
    );
    assert.ok(silent.includes('-an'));
    assert.equal(after(silent, '-adaptation_sets'), 'id=0,streams=v');
    assert.equal(after(silent, '-filter_complex'), '[0:V:0]scale=-2:240,format=yuv420p[v0]');
    assert.match(after(silent, '-x265-params')!, /keyint=60:min-keyint=60:scenecut=0:open-gop=0/);
    assert.ok(!silent.includes('-t'), 'no cap without a limit (the benchmark’s bare command)');
    const av1 = buildAdaptiveArgs('/in/a.mp4', '/out', { ladder, codec: 'av1', segmentSeconds: 4 }, source);
    assert.equal(after(av1, '-c:v'), 'libsvtav1');
    assert.equal(after(av1, '-svtav1-params'), 'scd=0');
  });

  it('refuses a source without video', () => {
    assert.throws(
      () => buildAdaptiveArgs('/a', '/o', { ladder, codec: 'h264', segmentSeconds: 4 }, { ...source, hasVideo: false }),
      /no video stream/,
    );
  });
});

describe('HLS playlists and the DASH manifest', () => {
  const master =
    '#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="group_A1",NAME="audio_2",DEFAULT=YES,URI="media_2.m3u8"\n' +
    '#EXT-X-STREAM-INF:BANDWIDTH=934319,RESOLUTION=640x360,CODECS="avc1.64001e,mp4a.40.2",AUDIO="group_A1"\nmedia_0.m3u8\n\n';
  const media =
    '#EXTM3U\n#EXT-X-VERSION:6\n#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:1\n#EXT-X-MAP:URI="init_0.mp4"\n' +
    '#EXTINF:4.000000,\n#EXT-X-PROGRAM-DATE-TIME:2026-11-28T21:30:07.000+0000\nseg_0_00001.m4s\n' +
    '#EXTINF:4.040000,\nseg_0_00002.m4s\n#EXT-X-ENDLIST\n';

  it('tidies the master and media playlists to the HLS rules', () => {
    const m = normalizeMaster(master);
    assert.match(m, /^#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-INDEPENDENT-SEGMENTS\n/);
    assert.doesNotMatch(m, /\n\n/);
    assert.deepEqual(masterVariants(m), [
      {
        uri: 'media_0.m3u8',
        bandwidth: 934319,
        width: 640,
        height: 360,
        codecs: 'avc1.64001e,mp4a.40.2',
        attributes: {
          BANDWIDTH: '934319',
          RESOLUTION: '640x360',
          CODECS: 'avc1.64001e,mp4a.40.2',
          AUDIO: 'group_A1',
        },
      },
    ]);
    const p = normalizeMediaPlaylist(media);
    assert.match(p, /#EXT-X-TARGETDURATION:5\n/, 'at least the longest segment, rounded up');
    assert.match(p, /#EXT-X-PLAYLIST-TYPE:VOD/);
    assert.doesNotMatch(p, /PROGRAM-DATE-TIME/);
    assert.deepEqual(segmentDurations(p), [4, 4.04]);
  });

  it('tidies a growing media playlist into an EVENT playlist that starts at the beginning', () => {
    const growing = media.replace(/#EXT-X-ENDLIST\n?/, '');
    const p = normalizeMediaPlaylist(growing, 'EVENT', 6);
    assert.match(p, /#EXT-X-PLAYLIST-TYPE:EVENT\n/);
    assert.match(p, /#EXT-X-START:TIME-OFFSET=0\n/, 'players start at 0, not at the live edge');
    assert.match(p, /#EXT-X-TARGETDURATION:6\n/, 'the segment length: it does not change as segments arrive');
    assert.doesNotMatch(p, /#EXT-X-ENDLIST/);
    assert.doesNotMatch(p, /PLAYLIST-TYPE:VOD/);
    assert.doesNotMatch(normalizeMediaPlaylist(media, 'EVENT', 4), /#EXT-X-ENDLIST/, 'never an end while it grows');
    assert.deepEqual(segmentDurations(p), [4, 4.04]);
    assert.deepEqual(playlistUris(p), playlistUris(growing));
  });

  it('rewrites every URI with a prefix and a signature query', () => {
    const q = '?expiry=1&method=get&signature=abc';
    const m = rewritePlaylist(normalizeMaster(master), 'hls.m3u8.pkg/', q);
    assert.match(m, /URI="hls\.m3u8\.pkg\/media_2\.m3u8\?expiry=1&method=get&signature=abc"/);
    assert.match(m, /\nhls\.m3u8\.pkg\/media_0\.m3u8\?expiry=1&method=get&signature=abc\n/);
    const p = rewritePlaylist(media, '', q);
    assert.match(p, /#EXT-X-MAP:URI="init_0\.mp4\?expiry=1/);
    assert.match(p, /\nseg_0_00002\.m4s\?expiry=1&method=get&signature=abc\n/);
    assert.equal(rewritePlaylist(media, '', ''), media, 'unsigned entries are served as stored');
    const mpd = '<SegmentTemplate initialization="init_$RepresentationID$.mp4" media="seg_$Number%05d$.m4s" />';
    assert.equal(
      rewriteManifest(mpd, q),
      '<SegmentTemplate initialization="init_$RepresentationID$.mp4?expiry=1&amp;method=get&amp;signature=abc" ' +
        'media="seg_$Number%05d$.m4s?expiry=1&amp;method=get&amp;signature=abc" />',
    );
    assert.equal(manifestDuration('<MPD mediaPresentationDuration="PT1M3.5S">'), 63.5);
  });

  it('serves entries with their content types, under keys beside the file', () => {
    assert.equal(packageEntryMime('media_0.m3u8'), 'application/vnd.apple.mpegurl');
    assert.equal(packageEntryMime('manifest.mpd'), 'application/dash+xml');
    assert.equal(packageEntryMime('seg_0_00001.m4s'), 'video/iso.segment');
    assert.equal(packageEntryMime('init_0.mp4'), 'video/mp4');
    assert.equal(packageEntryKey('projects/p/files/file_a', 'seg.m4s'), 'projects/p/files/file_a.pkg/seg.m4s');
    assert.equal(packageOwner(packageKey('projects/p/files/file_a')), 'projects/p/files/file_a');
    assert.equal(packageOwner('projects/p/files/file_a'), null);
    assert.throws(() => packageEntryKey('projects/p/files/file_a', '../x'));
    assert.throws(() => packageEntryKey('projects/p/files/file_a', '.hidden'));
  });
});
