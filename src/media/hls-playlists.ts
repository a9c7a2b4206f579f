// Pure text work on the HLS playlists and the DASH manifest of an adaptive package: tidying what
// FFmpeg's DASH muxer writes into VOD playlists that follow the HLS rules, reading the variants
// back, and rewriting entry URLs at delivery (a prefix for the master, a signature for every URL).

/** Entry names of a package: flat, no dot first, nothing that needs escaping in a URL. */
export const PACKAGE_ENTRY = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

export const HLS_MIME = 'application/vnd.apple.mpegurl';
export const DASH_MIME = 'application/dash+xml';

/** The content type a package entry is served with. */
export function packageEntryMime(entry: string): string {
  if (entry.endsWith('.m3u8')) return HLS_MIME;
  if (entry.endsWith('.mpd')) return DASH_MIME;
  if (entry.endsWith('.m4s')) return 'video/iso.segment';
  if (entry.endsWith('.mp4')) return 'video/mp4';
  if (entry.endsWith('.vtt')) return 'text/vtt; charset=utf-8';
  return 'application/octet-stream';
}

/** Whether an entry is a playlist or manifest (rewritten at delivery, cached briefly) rather than a segment. */
export function isPlaylistEntry(entry: string): boolean {
  return entry.endsWith('.m3u8') || entry.endsWith('.mpd');
}

const lines = (text: string) => text.split(/\r?\n/);

/** The master as served: #EXT-X-INDEPENDENT-SEGMENTS (every segment starts on a keyframe), no blank lines. */
export function normalizeMaster(text: string): string {
  const out = lines(text).filter((l) => l.trim() !== '' && l !== '#EXT-X-INDEPENDENT-SEGMENTS');
  const at = out.findIndex((l) => l.startsWith('#EXT-X-VERSION'));
  out.splice(at >= 0 ? at + 1 : 1, 0, '#EXT-X-INDEPENDENT-SEGMENTS');
  return `${out.join('\n')}\n`;
}

/**
 * A media playlist as a finished VOD: #EXT-X-TARGETDURATION at least every segment's duration
 * rounded up (the HLS rule), #EXT-X-PLAYLIST-TYPE:VOD, no wall-clock PROGRAM-DATE-TIME.
 * `EVENT`: the same playlist while it grows (playable early): segments are only appended, no
 * #EXT-X-ENDLIST yet, #EXT-X-START at 0 so players start at the beginning rather than the live
 * edge, and a target duration that does not change as segments arrive (`segmentSeconds` at least).
 */
export function normalizeMediaPlaylist(text: string, type: 'VOD' | 'EVENT' = 'VOD', segmentSeconds = 0): string {
  const src = lines(text).filter(
    (l) =>
      l.trim() !== '' &&
      !l.startsWith('#EXT-X-PROGRAM-DATE-TIME') &&
      !l.startsWith('#EXT-X-PLAYLIST-TYPE') &&
      l !== '#EXT-X-INDEPENDENT-SEGMENTS',
  );
  const longest = Math.max(type === 'EVENT' ? segmentSeconds : 0, ...segmentDurations(text));
  const target = Math.max(1, Math.ceil(longest - 1e-6));
  const out = src
    .filter((l) => type === 'VOD' || l !== '#EXT-X-ENDLIST')
    .map((l) => (l.startsWith('#EXT-X-TARGETDURATION:') ? `#EXT-X-TARGETDURATION:${target}` : l));
  const at = out.findIndex((l) => l.startsWith('#EXT-X-VERSION'));
  const head = [`#EXT-X-PLAYLIST-TYPE:${type}`, '#EXT-X-INDEPENDENT-SEGMENTS'];
  if (type === 'EVENT') head.push('#EXT-X-START:TIME-OFFSET=0');
  out.splice(at >= 0 ? at + 1 : 1, 0, ...head);
  return `${out.join('\n')}\n`;
}

/** The #EXTINF durations of a media playlist, in order. */
export function segmentDurations(text: string): number[] {
  return lines(text)
    .filter((l) => l.startsWith('#EXTINF:'))
    .map((l) => Number(l.slice(8).split(',')[0]));
}

/** The segment URIs of a media playlist (its #EXT-X-MAP first when it has one). */
export function playlistUris(text: string): string[] {
  const out: string[] = [];
  for (const l of lines(text)) {
    const map = /^#EXT-X-MAP:.*URI="([^"]+)"/.exec(l);
    if (map) out.push(map[1]!);
    else if (l.trim() !== '' && !l.startsWith('#')) out.push(l.trim());
  }
  return out;
}

export interface Variant {
  uri: string;
  bandwidth: number;
  width?: number;
  height?: number;
  codecs?: string;
  attributes: Record<string, string>;
}

/** The attributes of an HLS tag line (`KEY=value,KEY="quoted, value"`). */
export function tagAttributes(line: string): Record<string, string> {
  const body = line.slice(line.indexOf(':') + 1);
  const out: Record<string, string> = {};
  for (const m of body.matchAll(/([A-Z0-9-]+)=("[^"]*"|[^,]*)/g))
    out[m[1]!] = m[2]!.startsWith('"') ? m[2]!.slice(1, -1) : m[2]!;
  return out;
}

/** The variants (#EXT-X-STREAM-INF) of a master playlist. */
export function masterVariants(text: string): Variant[] {
  const ls = lines(text);
  const out: Variant[] = [];
  ls.forEach((l, i) => {
    if (!l.startsWith('#EXT-X-STREAM-INF:')) return;
    const attributes = tagAttributes(l);
    const uri = ls.slice(i + 1).find((x) => x.trim() !== '' && !x.startsWith('#'));
    if (!uri) return;
    const [w, h] = (attributes.RESOLUTION ?? '').split('x').map(Number);
    out.push({
      uri: uri.trim(),
      bandwidth: Number(attributes.BANDWIDTH),
      ...(w && h ? { width: w, height: h } : {}),
      ...(attributes.CODECS ? { codecs: attributes.CODECS } : {}),
      attributes,
    });
  });
  return out;
}

/** The URIs of the renditions (#EXT-X-MEDIA) of a master playlist. */
export function masterRenditionUris(text: string): string[] {
  return lines(text)
    .filter((l) => l.startsWith('#EXT-X-MEDIA:'))
    .map((l) => tagAttributes(l).URI)
    .filter((u): u is string => u !== undefined);
}

/**
 * A playlist with every URI (URI lines and URI="…" attributes) prefixed and given a query
 * (`?expiry=…&signature=…`, or ''): the master points into its package, and signed delivery
 * carries the signature into every entry.
 */
export function rewritePlaylist(text: string, prefix: string, query: string): string {
  const uri = (u: string) => (/^[a-z][a-z0-9+.-]*:/i.test(u) ? u : `${prefix}${u}${query}`);
  return lines(text)
    .map((l) => {
      if (l.trim() === '') return l;
      if (l.startsWith('#')) return l.replace(/URI="([^"]+)"/g, (_m, u: string) => `URI="${uri(u)}"`);
      return uri(l.trim());
    })
    .join('\n');
}

/** The DASH manifest with the query on its segment templates (XML-escaped). */
export function rewriteManifest(text: string, query: string): string {
  if (!query) return text;
  const q = query.replace(/&/g, '&amp;');
  return text.replace(/\b(initialization|media)="([^"?]+)"/g, (_m, attr: string, u: string) => `${attr}="${u}${q}"`);
}

/** The presentation's duration in seconds from an MPD (`mediaPresentationDuration="PT1M3.5S"`). */
export function manifestDuration(text: string): number | undefined {
  const m = /mediaPresentationDuration="PT(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?"/.exec(text);
  if (!m) return undefined;
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}

/** A WebVTT subtitles rendition of a master playlist: a name, a language, its media playlist's URI. */
export interface SubtitleRendition {
  name: string;
  language: string;
  uri: string;
}

const quoted = (s: string) => s.replace(/["\r\n]/g, '');

/** The master with subtitle renditions (GROUP-ID "subs") that every variant refers to; none: as it was. */
export function addSubtitleRenditions(master: string, subtitles: readonly SubtitleRendition[]): string {
  if (subtitles.length === 0) return master;
  const tags = subtitles.map(
    (s, i) =>
      `#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="${quoted(s.name)}",LANGUAGE="${quoted(s.language)}",DEFAULT=NO,AUTOSELECT=${i === 0 ? 'YES' : 'NO'},URI="${quoted(s.uri)}"`,
  );
  const out: string[] = [];
  let placed = false;
  for (const l of lines(master)) {
    if (!placed && (l.startsWith('#EXT-X-MEDIA:') || l.startsWith('#EXT-X-STREAM-INF:'))) {
      out.push(...tags);
      placed = true;
    }
    out.push(l.startsWith('#EXT-X-STREAM-INF:') ? `${l},SUBTITLES="subs"` : l);
  }
  return out.join('\n');
}

/** A subtitles media playlist: the whole WebVTT file as its one segment. */
export function subtitlePlaylist(vttUrl: string, durationSeconds: number): string {
  const d = Math.max(0.001, durationSeconds);
  return [
    '#EXTM3U',
    '#EXT-X-VERSION:3',
    `#EXT-X-TARGETDURATION:${Math.ceil(d)}`,
    '#EXT-X-PLAYLIST-TYPE:VOD',
    `#EXTINF:${d.toFixed(3)},`,
    vttUrl,
    '#EXT-X-ENDLIST',
    '',
  ].join('\n');
}
