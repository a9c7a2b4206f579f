// Pure argument builders for ffprobe and frame grabs, kept apart from process spawning so they can
// be unit tested. Every input is opened with the same guards (ffmpeg-preamble.ts).

import { ffmpegPreamble, ffprobePreamble, fileUrl, oneStreamOf } from './ffmpeg-preamble.js';

/**
 * Packets read after the verification seek. An honest file's tail (from its last keyframe to
 * the end: one GOP and the audio beside it) is a few hundred packets; more means the file goes
 * on well past where the seek landed.
 */
export const TAIL_PACKETS = 5000;

/**
 * Verification seeks go no further than this. PCM WAV turns a seek into a byte offset, and one
 * past the filesystem's largest offset (1e8 s at 192 kB/s) fails over to reading the whole file.
 */
export const MAX_SEEK_SECONDS = 1_000_000;

/** Scans end here at the latest (~30 years): beyond, ffmpeg's time parser would overflow. */
const MAX_SCAN_SECONDS = 1e9;

const PACKET_ENTRIES = 'packet=stream_index,pts_time,dts_time,duration_time';

/**
 * Header probe as JSON. With `tailFromSeconds`, the same run also seeks there and lists up to
 * TAIL_PACKETS packets from the keyframe it lands on, so the packets at the file's real end
 * can be compared with the duration its header declares (see probe-duration.ts).
 */
export function ffprobeArgs(path: string, tailFromSeconds?: number): string[] {
  const tail =
    tailFromSeconds === undefined
      ? []
      : [
          '-show_entries',
          PACKET_ENTRIES,
          '-read_intervals',
          `${formatSeconds(Math.min(tailFromSeconds, MAX_SEEK_SECONDS))}%+#${TAIL_PACKETS}`,
        ];
  return [...ffprobePreamble(), '-print_format', 'json', '-show_format', '-show_streams', ...tail, '-i', fileUrl(path)];
}

/**
 * Packet times from `fromSeconds` (undefined: from where the header left off, no seek) until a
 * packet at or past `toSeconds`, one `key=value|…` line each. Demuxing only, nothing decoded.
 */
export function packetScanArgs(path: string, fromSeconds: number | undefined, toSeconds: number): string[] {
  const from = fromSeconds === undefined ? '' : formatSeconds(Math.min(fromSeconds, MAX_SEEK_SECONDS));
  return [
    ...ffprobePreamble(),
    '-show_entries',
    PACKET_ENTRIES,
    '-of',
    'compact=p=0',
    '-read_intervals',
    `${from}%${formatSeconds(Math.min(toSeconds, MAX_SCAN_SECONDS))}`,
    '-i',
    fileUrl(path),
  ];
}

/** Seconds as ffmpeg accepts them, never negative or NaN. */
export function formatSeconds(seconds: number): string {
  const s = Number.isFinite(seconds) && seconds > 0 ? seconds : 0;
  return s.toFixed(3);
}

/**
 * One PNG frame at `atSeconds`, no wider than `maxWidth` (never upscaled). `outPath` '-' writes
 * to stdout. `-ss` before `-i` seeks by keyframe index instead of decoding from the start.
 */
export function frameGrabArgs(input: string, atSeconds: number, outPath: string, maxWidth: number): string[] {
  const width = Math.max(1, Math.floor(maxWidth));
  // h keeps the aspect ratio but never reaches 0 for extreme ratios; 'area' averages pixels.
  const scale = `scale=w='min(iw,${width})':h='max(1,round(ow*ih/iw))':flags=area,format=rgb24`;
  return [
    ...ffmpegPreamble(),
    '-ss',
    formatSeconds(atSeconds),
    ...oneStreamOf(input, 'video'),
    '-frames:v',
    '1',
    '-vf',
    scale,
    '-c:v',
    'png',
    '-f',
    'image2pipe',
    outPath === '-' ? 'pipe:1' : fileUrl(outPath),
  ];
}
