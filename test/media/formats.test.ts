import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isAppError } from '../../src/errors.js';
import {
  containerFormat,
  formatDuration,
  formatMegapixels,
  imageFormat,
  pixelLimitError,
  type ContainerFacts,
} from '../../src/media/formats.js';

const MOV = 'mov,mp4,m4a,3gp,3g2,mj2';
const MKV = 'matroska,webm';

function facts(over: Partial<ContainerFacts>): ContainerFacts {
  return { formatName: MOV, kind: 'video', videoCodecs: ['h264'], audioCodecs: ['aac'], subtitleCodecs: [], ...over };
}

describe('containerFormat', () => {
  it('tells MP4, MOV, M4A and 3GP apart by major brand', () => {
    assert.deepEqual(containerFormat(facts({ majorBrand: 'isom' })), {
      format: 'mp4',
      extension: 'mp4',
      mime: 'video/mp4',
    });
    assert.equal(containerFormat(facts({ majorBrand: 'mp42' }))?.format, 'mp4');
    assert.deepEqual(containerFormat(facts({ majorBrand: 'qt  ' })), {
      format: 'mov',
      extension: 'mov',
      mime: 'video/quicktime',
    });
    assert.equal(containerFormat(facts({}))?.format, 'mov', 'no ftyp: old QuickTime');
    assert.equal(containerFormat(facts({ majorBrand: '3gp5' }))?.mime, 'video/3gpp');
    const m4a = containerFormat(facts({ majorBrand: 'M4A ', kind: 'audio', videoCodecs: [] }));
    assert.deepEqual(m4a, { format: 'm4a', extension: 'm4a', mime: 'audio/mp4' });
    assert.equal(containerFormat(facts({ majorBrand: 'isom', kind: 'audio', videoCodecs: [] }))?.format, 'm4a');
  });

  it('calls Matroska WebM only when every codec is allowed in WebM', () => {
    const webm = facts({ formatName: MKV, videoCodecs: ['vp9'], audioCodecs: ['opus'] });
    assert.deepEqual(containerFormat(webm), { format: 'webm', extension: 'webm', mime: 'video/webm' });
    assert.equal(containerFormat({ ...webm, videoCodecs: ['av1'], audioCodecs: ['vorbis'] })?.format, 'webm');
    assert.equal(containerFormat({ ...webm, audioCodecs: ['aac'] })?.format, 'mkv');
    assert.equal(containerFormat({ ...webm, subtitleCodecs: ['subrip'] })?.format, 'mkv');
    assert.equal(containerFormat({ ...webm, kind: 'audio', videoCodecs: [] })?.mime, 'audio/webm');
    assert.deepEqual(
      containerFormat(facts({ formatName: MKV, kind: 'audio', videoCodecs: [], audioCodecs: ['flac'] })),
      {
        format: 'mka',
        extension: 'mka',
        mime: 'audio/x-matroska',
      },
    );
  });

  it('maps the single-format demuxers', () => {
    const audio = (formatName: string) => containerFormat(facts({ formatName, kind: 'audio', videoCodecs: [] }));
    assert.equal(audio('mp3')?.mime, 'audio/mpeg');
    assert.equal(audio('wav')?.mime, 'audio/wav');
    assert.equal(audio('flac')?.mime, 'audio/flac');
    assert.equal(audio('aac')?.mime, 'audio/aac');
    assert.equal(audio('ogg')?.extension, 'ogg');
    assert.equal(containerFormat(facts({ formatName: 'ogg', videoCodecs: ['theora'] }))?.mime, 'video/ogg');
    assert.equal(containerFormat(facts({ formatName: 'mpegts' }))?.extension, 'ts');
    assert.equal(containerFormat(facts({ formatName: 'hls' })), null);
  });
});

describe('imageFormat', () => {
  it('maps sharp formats and refuses the ones we do not serve', () => {
    assert.deepEqual(imageFormat('jpeg', undefined, false), { format: 'jpeg', extension: 'jpg', mime: 'image/jpeg' });
    assert.equal(imageFormat('heif', 'av1', false)?.format, 'avif');
    assert.equal(imageFormat('heif', 'hevc', false), null, 'HEIC without an HEVC decoder');
    assert.equal(imageFormat('heif', 'hevc', true)?.mime, 'image/heic');
    assert.equal(imageFormat('svg', undefined, false), null);
    assert.equal(imageFormat('vips', undefined, false), null);
  });
});

describe('limit messages', () => {
  it('formats sizes and durations for people', () => {
    assert.equal(formatMegapixels(400_000_000), '400 MP');
    assert.equal(formatMegapixels(12_345_678), '12 MP');
    assert.equal(formatMegapixels(2_073_600), '2.1 MP');
    assert.equal(formatDuration(12.345), '12.3 s');
    assert.equal(formatDuration(200), '3 min 20 s');
    assert.equal(formatDuration(7500), '2 h 5 min');
    assert.equal(formatDuration(3600), '1 h');
  });

  it('builds media_limit_exceeded errors with the offending size', () => {
    const err = pixelLimitError('the image', 20000, 20000, 1, 100_000_000);
    assert.ok(isAppError(err));
    assert.equal(err.code, 'media_limit_exceeded');
    assert.equal(err.message, 'the image is 20000x20000 (400 MP); the limit is 100 MP (MEDIAD_MAX_PIXELS)');
    const anim = pixelLimitError('the animated image', 500, 500, 1000, 100_000_000);
    assert.equal(
      anim.message,
      'the animated image is 500x500 with 1000 frames (250 MP in all); the limit is 100 MP (MEDIAD_MAX_PIXELS)',
    );
  });
});
