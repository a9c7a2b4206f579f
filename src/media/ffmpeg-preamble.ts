// How every ffmpeg and ffprobe run opens: the untrusted input's guards (demuxers, size of the
// probe) and, for ffmpeg, one preamble: no banner, never reading stdin (a run must not wait on a
// prompt), only errors logged. Pure builders (as immich's media utils), so no run leaves one out.

/**
 * Demuxers we accept. Restricting them stops ffmpeg from following playlists (hls, concat)
 * or image sequences that could read other local files or URLs; everything else is refused.
 */
export const DEMUXER_WHITELIST = [
  'mov',
  'matroska',
  'mp3',
  'wav',
  'ogg',
  'flac',
  'aac',
  'avi',
  'mpegts',
  'aiff',
] as const;

/** Bytes / microseconds ffprobe may read to find streams: enough for real files, bounded for hostile ones. */
export const PROBE_SIZE_BYTES = 20_000_000;
export const ANALYZE_DURATION_US = 20_000_000;

/** `file:` prefix so a name starting with '-' or containing ':' is never read as an option or protocol. */
export function fileUrl(path: string): string {
  return path.startsWith('file:') ? path : `file:${path}`;
}

/** Options placed before `-i` for every untrusted input. */
export function inputHardeningArgs(): string[] {
  return [
    '-protocol_whitelist',
    'file',
    '-format_whitelist',
    DEMUXER_WHITELIST.join(','),
    '-probesize',
    String(PROBE_SIZE_BYTES),
    '-analyzeduration',
    String(ANALYZE_DURATION_US),
  ];
}

/** What differs between runs; the rest of the preamble does not. */
export interface PreambleOptions {
  /** `-progress pipe:1 -nostats`: progress lines on stdout, for runFfmpeg's parser. */
  progress?: boolean;
  /** `-y`: overwrite the output file; off when the output is stdout or the null muxer. */
  overwrite?: boolean;
  /** 'info' only when a parser reads ffmpeg's log (scene scores). */
  loglevel?: 'error' | 'info';
  /** The input guards; off only for our own intermediate file, whose demuxer is forced. */
  untrustedInput?: boolean;
}

/** The options before an ffmpeg run's first input. */
export function ffmpegPreamble({
  progress = false,
  overwrite = true,
  loglevel = 'error',
  untrustedInput = true,
}: PreambleOptions = {}): string[] {
  return [
    '-hide_banner',
    '-nostdin',
    ...(overwrite ? ['-y'] : []),
    '-loglevel',
    loglevel,
    ...(progress ? ['-progress', 'pipe:1', '-nostats'] : []),
    ...(untrustedInput ? inputHardeningArgs() : []),
  ];
}

/** The options before ffprobe's input: quiet, and the same guards. */
export function ffprobePreamble(): string[] {
  return ['-hide_banner', '-v', 'error', ...inputHardeningArgs()];
}

/** `-i` an untrusted input, keeping only its first video stream ('V': not cover art) or audio stream. */
export function oneStreamOf(path: string, stream: 'video' | 'audio'): string[] {
  const [keep, drop] = stream === 'video' ? ['0:V:0', '-an'] : ['0:a:0', '-vn'];
  return ['-i', fileUrl(path), '-map', keep, drop, '-sn', '-dn'];
}
