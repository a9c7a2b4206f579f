import type { ProbeResult } from '../media/index.js';

// RFC 6381-style codec names for the `type` of outputs, e.g. video/mp4;codecs=avc1,mp4a.
const CODEC_TAGS: Record<string, string> = {
  h264: 'avc1',
  hevc: 'hvc1',
  vp8: 'vp8',
  vp9: 'vp09',
  av1: 'av01',
  aac: 'mp4a',
  opus: 'opus',
  mp3: 'mp3',
  vorbis: 'vorbis',
  flac: 'flac',
};

export function mimeWithCodecs(mime: string, probe: Pick<ProbeResult, 'videoCodec' | 'audioCodec'>): string {
  const tags = [probe.videoCodec, probe.audioCodec]
    .filter((c): c is string => Boolean(c))
    .map((c) => CODEC_TAGS[c] ?? c);
  return tags.length > 0 ? `${mime};codecs=${tags.join(',')}` : mime;
}
