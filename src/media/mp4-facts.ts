// What ffprobe would say about an MP4 or MOV file mediad's own FFmpeg just wrote, read from its
// `moov` box in-process. A transcode's output was probed with ffprobe: a process start-up
// (70 ms of CPU, 100–170 ms on a busy 2-core machine), 3–5% of a 10 s 1080p → 720p encode. The
// fields are computed as FFmpeg's mov demuxer and ffprobe compute them (test/media/mp4-facts
// compares them with ffprobe's on real outputs); a file with anything this reader does not
// model (a rotation matrix, fragments, an unknown codec, more than one track of a type) is
// answered null, and the caller probes it with ffprobe as before.
import { open } from 'node:fs/promises';
import { containerFormat } from './formats.js';
import type { ProbeResult } from './probe.js';

/** How much of the file's start is read to find `moov` (with +faststart it follows `ftyp`). */
const HEAD_BYTES = 1 << 20;

/** The codecs of sample entries, as ffprobe names them. */
const CODECS: Readonly<Record<string, string>> = {
  avc1: 'h264',
  avc3: 'h264',
  hvc1: 'hevc',
  hev1: 'hevc',
  vp09: 'vp9',
  av01: 'av1',
  mp4a: 'aac',
  Opus: 'opus',
  fLaC: 'flac',
};

interface Box {
  type: string;
  /** Start and end of the payload (after the header) in the buffer. */
  start: number;
  end: number;
}

function* boxes(buf: Buffer, from: number, to: number): Generator<Box> {
  let at = from;
  while (at + 8 <= to) {
    let size = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    let header = 8;
    if (size === 1) {
      if (at + 16 > to) return;
      size = Number(buf.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) size = to - at;
    if (size < header || at + size > to) return;
    yield { type, start: at + header, end: at + size };
    at += size;
  }
}

const child = (buf: Buffer, box: Box, type: string) => {
  for (const b of boxes(buf, box.start, box.end)) if (b.type === type) return b;
  return undefined;
};
const children = (buf: Buffer, box: Box, type: string) =>
  [...boxes(buf, box.start, box.end)].filter((b) => b.type === type);

/** version 0: 32-bit times, version 1: 64-bit. Returns [timescale, duration]. */
function timing(buf: Buffer, box: Box): [number, number] {
  const v1 = buf[box.start] === 1;
  return v1
    ? [buf.readUInt32BE(box.start + 20), Number(buf.readBigUInt64BE(box.start + 24))]
    : [buf.readUInt32BE(box.start + 12), buf.readUInt32BE(box.start + 16)];
}

/** The identity matrix of tkhd (no rotation or flip). */
const IDENTITY = [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000];

interface Track {
  handler: string;
  codec: string;
  width?: number;
  height?: number;
  fps?: number;
}

function readTrack(buf: Buffer, trak: Box): Track | null {
  const tkhd = child(buf, trak, 'tkhd');
  const mdia = child(buf, trak, 'mdia');
  if (!tkhd || !mdia) return null;
  const matrixAt = tkhd.start + (buf[tkhd.start] === 1 ? 52 : 40);
  if (IDENTITY.some((v, i) => buf.readInt32BE(matrixAt + 4 * i) !== v)) return null;
  // An edit list other than FFmpeg's one-entry list (its start offset) is not modelled.
  const elst = child(buf, trak, 'edts') && child(buf, child(buf, trak, 'edts')!, 'elst');
  if (elst && buf.readUInt32BE(elst.start + 4) > 1) return null;
  const mdhd = child(buf, mdia, 'mdhd');
  const hdlr = child(buf, mdia, 'hdlr');
  const minf = child(buf, mdia, 'minf');
  const stbl = minf && child(buf, minf, 'stbl');
  const stsd = stbl && child(buf, stbl, 'stsd');
  const stts = stbl && child(buf, stbl, 'stts');
  if (!mdhd || !hdlr || !stsd || !stts) return null;
  const handler = buf.toString('latin1', hdlr.start + 8, hdlr.start + 12);
  // stsd: version/flags, entry count, then the first sample entry (a box).
  if (buf.readUInt32BE(stsd.start + 4) !== 1) return null;
  const [entry] = boxes(buf, stsd.start + 8, stsd.end);
  const codec = entry && CODECS[entry.type];
  if (!entry || !codec) return null;
  const track: Track = { handler, codec };
  if (handler === 'vide') {
    // VisualSampleEntry: 6 reserved, data ref index, 16 bytes pre-defined/reserved, width, height.
    track.width = buf.readUInt16BE(entry.start + 24);
    track.height = buf.readUInt16BE(entry.start + 26);
    // avg_frame_rate: the samples over the sum of their durations, in the media's timescale.
    const [timescale] = timing(buf, mdhd);
    let frames = 0;
    let ticks = 0;
    const n = buf.readUInt32BE(stts.start + 4);
    for (let i = 0; i < n; i++) {
      const count = buf.readUInt32BE(stts.start + 8 + 8 * i);
      frames += count;
      ticks += count * buf.readUInt32BE(stts.start + 12 + 8 * i);
    }
    if (frames > 0 && ticks > 0) track.fps = Math.round(((timescale * frames) / ticks) * 1000) / 1000;
  }
  return track;
}

/** The facts of an MP4/MOV file FFmpeg wrote with `+faststart`, or null when ffprobe should tell. */
export async function readMp4Facts(path: string): Promise<ProbeResult | null> {
  const fh = await open(path, 'r');
  let buf: Buffer;
  let size: number;
  try {
    size = (await fh.stat()).size;
    buf = Buffer.alloc(Math.min(size, HEAD_BYTES));
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    buf = buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
  try {
    return factsOf(buf, size);
  } catch (err) {
    // A box that claims more than it holds: not a file this reader models.
    if (err instanceof RangeError) return null;
    throw err;
  }
}

function factsOf(buf: Buffer, size: number): ProbeResult | null {
  const top = [...boxes(buf, 0, buf.length)];
  const ftyp = top.find((b) => b.type === 'ftyp');
  const moov = top.find((b) => b.type === 'moov');
  if (!ftyp || !moov || top.some((b) => b.type === 'moof')) return null;
  const mvhd = child(buf, moov, 'mvhd');
  if (!mvhd) return null;
  const tracks: Track[] = [];
  for (const trak of children(buf, moov, 'trak')) {
    const t = readTrack(buf, trak);
    if (!t) return null;
    tracks.push(t);
  }
  const video = tracks.filter((t) => t.handler === 'vide');
  const audio = tracks.filter((t) => t.handler === 'soun');
  if (video.length + audio.length !== tracks.length || video.length > 1 || audio.length > 1) return null;
  const [v] = video;
  const [a] = audio;
  if (!v && !a) return null;
  if (v && (!v.width || !v.height)) return null;
  const kind = v ? 'video' : 'audio';
  const fmt = containerFormat({
    formatName: 'mov,mp4,m4a,3gp,3g2,mj2',
    majorBrand: buf.toString('latin1', ftyp.start, ftyp.start + 4),
    kind,
    videoCodecs: video.map((t) => t.codec),
    audioCodecs: audio.map((t) => t.codec),
    subtitleCodecs: [],
  });
  if (!fmt) return null;
  const [timescale, ticks] = timing(buf, mvhd);
  if (!timescale) return null;
  // ffprobe's format duration and bit rate: mvhd's duration in microseconds, then the file's size over it.
  const micros = Math.round((ticks * 1e6) / timescale);
  const result: ProbeResult = { kind, ...fmt, hasVideo: v !== undefined, hasAudio: a !== undefined };
  if (micros > 0) {
    result.duration = micros / 1e6;
    result.bitrate = Math.floor((size * 8 * 1e6) / micros);
  }
  if (v) {
    result.width = v.width;
    result.height = v.height;
    if (v.fps) result.fps = v.fps;
    result.videoCodec = v.codec;
  }
  if (a) result.audioCodec = a.codec;
  return result;
}
