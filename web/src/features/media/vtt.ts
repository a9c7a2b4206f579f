import webvtt from 'webvtt-parser';

// WebVTT read with the W3C parser (not with regular expressions): storyboards (cues whose text
// is `<sprite url>#xywh=x,y,w,h`), chapters and subtitles.

export interface Cue {
  start: number;
  end: number;
  text: string;
}

export function parseVtt(text: string): Cue[] {
  const parsed = new webvtt.WebVTTParser().parse(text, 'metadata');
  return parsed.cues.map((c) => ({ start: c.startTime, end: c.endTime, text: c.text }));
}

export interface StoryboardTile {
  start: number;
  end: number;
  /** The sprite's URL (resolved against the VTT's own URL). */
  url: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

/** The tiles of a storyboard VTT; cues that do not point into an image with #xywh= are left out. */
export function storyboardTiles(text: string, vttUrl: string): StoryboardTile[] {
  const tiles: StoryboardTile[] = [];
  for (const cue of parseVtt(text)) {
    const target = cue.text.trim();
    const hash = target.lastIndexOf('#xywh=');
    if (hash < 0) continue;
    const nums = target
      .slice(hash + 6)
      .split(',')
      .map((n) => Number(n));
    const [x, y, w, h] = nums;
    if (nums.length !== 4 || x === undefined || y === undefined || w === undefined || h === undefined) continue;
    if (!nums.every((n) => Number.isFinite(n) && n >= 0) || w === 0 || h === 0) continue;
    tiles.push({ start: cue.start, end: cue.end, url: new URL(target.slice(0, hash), vttUrl).href, x, y, w, h });
  }
  return tiles;
}

/** The tile shown at `time` (the last one whose start is not after it). */
export function tileAt(tiles: readonly StoryboardTile[], time: number): StoryboardTile | undefined {
  let found: StoryboardTile | undefined;
  for (const t of tiles) {
    if (t.start <= time) found = t;
    else break;
  }
  return found ?? tiles[0];
}
