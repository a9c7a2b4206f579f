// WebVTT and SubRip writers. VTT: "WEBVTT" header, HH:MM:SS.mmm, &, < and > escaped.
// SRT: cues numbered from 1, HH:MM:SS,mmm (comma), a blank line after each cue.
import type { Cue } from './cues.js';

export type SubtitleFormat = 'vtt' | 'srt';

export function formatTimestamp(seconds: number, format: SubtitleFormat): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const hms = `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}`;
  return `${hms}${format === 'vtt' ? '.' : ','}${pad(ms % 1000, 3)}`;
}

/** Cue text may not contain "-->" or blank lines in either format. */
function cleanLine(line: string): string {
  return line
    .replace(/-->/g, '→')
    .replace(/[\r\n]+/g, ' ')
    .trim();
}

function vttEscape(line: string): string {
  return line.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function toVtt(cues: readonly Cue[]): string {
  const body = cues.map(
    (c) =>
      `${formatTimestamp(c.start, 'vtt')} --> ${formatTimestamp(c.end, 'vtt')}\n${c.lines.map((l) => vttEscape(cleanLine(l))).join('\n')}\n`,
  );
  return ['WEBVTT\n', ...body].join('\n');
}

export function toSrt(cues: readonly Cue[]): string {
  return cues
    .map(
      (c, i) =>
        `${i + 1}\n${formatTimestamp(c.start, 'srt')} --> ${formatTimestamp(c.end, 'srt')}\n${c.lines.map(cleanLine).join('\n')}\n`,
    )
    .join('\n');
}

export function writeSubtitles(cues: readonly Cue[], format: SubtitleFormat): string {
  return format === 'vtt' ? toVtt(cues) : toSrt(cues);
}

export const SUBTITLE_MIME: Readonly<Record<SubtitleFormat, string>> = { vtt: 'text/vtt', srt: 'application/x-subrip' };
