// Chapter tracks: WebVTT (one cue per chapter, its title as text) and the JSON document
// `{chapters: [{index, start, end, title}]}` (reference 2.6).
import { toVtt } from '../subtitles/format.js';
import { ms3 } from '../speech/types.js';

export interface Chapter {
  index: number;
  start: number;
  end: number;
  title: string;
}

export function chaptersVtt(chapters: readonly Chapter[]): string {
  return toVtt(chapters.map((c) => ({ start: c.start, end: c.end, lines: [c.title] })));
}

export function chaptersJson(chapters: readonly Chapter[]): { chapters: Chapter[] } {
  return { chapters: chapters.map((c) => ({ index: c.index, start: ms3(c.start), end: ms3(c.end), title: c.title })) };
}
