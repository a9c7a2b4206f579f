// Reads WebVTT/SRT back into cues and lists what breaks the format or our captioning rules.
// Written here (not a parser library) because it checks mediad's own conventions too: line
// length, line count, order, overlap and times inside the media. Tests also cross-check the VTT
// output with the independent webvtt-parser.
import type { Cue } from './cues.js';
import type { SubtitleFormat } from './format.js';

export interface SubtitleRules {
  maxLineLength?: number;
  maxLines?: number;
  mediaDuration?: number;
}

export interface ParsedSubtitles {
  cues: Cue[];
  /** Empty when the file is well-formed and follows the rules. */
  problems: string[];
}

const VTT_TIME = /^(?:(\d{2,}):)?([0-5]\d):([0-5]\d)\.(\d{3})$/;
const SRT_TIME = /^(\d{2,}):([0-5]\d):([0-5]\d),(\d{3})$/;

export function parseTimestamp(text: string, format: SubtitleFormat): number | null {
  const m = (format === 'vtt' ? VTT_TIME : SRT_TIME).exec(text);
  if (!m) return null;
  return Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(m[4]) / 1000;
}

function unescapeVtt(line: string): string {
  return line.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

export function parseSubtitles(text: string, format: SubtitleFormat, rules: SubtitleRules = {}): ParsedSubtitles {
  const problems: string[] = [];
  const blocks = text
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .split(/\n{2,}/)
    .map((b) => b.replace(/^\n+|\n+$/g, ''))
    .filter(Boolean);
  if (format === 'vtt') {
    const header = blocks.shift() ?? '';
    if (!/^WEBVTT(?:[ \t].*)?$/.test(header.split('\n')[0] ?? ''))
      problems.push('the file does not start with a "WEBVTT" line');
  }
  const cues: Cue[] = [];
  blocks.forEach((block, i) => {
    const where = `cue ${i + 1}`;
    const lines = block.split('\n');
    if (format === 'srt') {
      const id = lines.shift();
      if (id !== String(i + 1)) problems.push(`${where}: expected the number ${i + 1}, found ${JSON.stringify(id)}`);
    } else if (lines[0] !== undefined && !lines[0].includes('-->')) {
      lines.shift(); // an optional VTT cue identifier
    }
    const timing = lines.shift() ?? '';
    const m = /^(\S+) --> (\S+)(?:[ \t].*)?$/.exec(timing);
    const start = m ? parseTimestamp(m[1]!, format) : null;
    const end = m ? parseTimestamp(m[2]!, format) : null;
    if (start === null || end === null) {
      problems.push(`${where}: bad timing line ${JSON.stringify(timing)}`);
      return;
    }
    if (!(end > start)) problems.push(`${where}: ends (${end}) before it starts (${start})`);
    if (lines.length === 0 || lines.some((l) => !l.trim())) problems.push(`${where}: has no text or an empty line`);
    const cueLines = format === 'vtt' ? lines.map(unescapeVtt) : lines;
    if (rules.maxLines !== undefined && cueLines.length > rules.maxLines)
      problems.push(`${where}: ${cueLines.length} lines (at most ${rules.maxLines})`);
    for (const l of cueLines) {
      if (rules.maxLineLength !== undefined && l.length > rules.maxLineLength)
        problems.push(`${where}: line of ${l.length} characters (at most ${rules.maxLineLength})`);
    }
    if (rules.mediaDuration !== undefined && end > rules.mediaDuration + 0.001)
      problems.push(`${where}: ends at ${end} s, after the media (${rules.mediaDuration} s)`);
    const prev = cues[cues.length - 1];
    if (prev && start < prev.end - 0.0005)
      problems.push(`${where}: starts at ${start} s, before the previous cue ends (${prev.end} s)`);
    cues.push({ start, end, lines: cueLines });
  });
  return { cues, problems };
}
