// What the language-model kinds tell a provider about a file: its kind, name and length, the
// images (the image itself or sampled video frames) and the transcript with times.
import type { ContentPart } from '../provider/chat.js';
import { formatTimestamp } from '../subtitles/format.js';
import type { FrameImage } from '../vision/frames.js';

export interface MediaContext {
  kind: 'image' | 'video' | 'audio';
  filename?: string;
  /** Seconds (audio/video). */
  duration?: number;
  images?: FrameImage[];
  transcript?: readonly { start: number; end: number; text: string }[];
  /** ISO 639-1 of the speech, when known. */
  language?: string | null;
}

/** Transcript budget in characters: long media keep their beginning and end. */
export const TRANSCRIPT_CHARS = 24_000;

const clock = (s: number) => formatTimestamp(s, 'vtt').replace(/\.\d{3}$/, '');

export function transcriptText(segments: MediaContext['transcript'], maxChars = TRANSCRIPT_CHARS): string {
  const lines = (segments ?? []).map((s) => `[${clock(s.start)}] ${s.text}`);
  const text = lines.join('\n');
  if (text.length <= maxChars) return text;
  const half = Math.floor(maxChars / 2);
  return `${text.slice(0, half)}\n[… transcript shortened …]\n${text.slice(-half)}`;
}

export function describeMedia(ctx: MediaContext): string {
  const facts = [`A ${ctx.kind} file`];
  if (ctx.filename) facts.push(`named ${JSON.stringify(ctx.filename)}`);
  if (ctx.duration) facts.push(`${ctx.duration.toFixed(1)} seconds long`);
  if (ctx.language) facts.push(`with speech in language "${ctx.language}"`);
  return `${facts.join(', ')}.`;
}

/** The user message's parts: facts, transcript, then the images (frames labelled with their time). */
export function mediaParts(ctx: MediaContext, instruction: string): ContentPart[] {
  const parts: ContentPart[] = [{ type: 'text', text: `${instruction}\n\n${describeMedia(ctx)}` }];
  const transcript = transcriptText(ctx.transcript);
  parts.push({
    type: 'text',
    text: transcript ? `Transcript (times are [hh:mm:ss]):\n${transcript}` : 'There is no speech transcript.',
  });
  for (const img of ctx.images ?? []) {
    if (img.time !== undefined) parts.push({ type: 'text', text: `Frame at ${clock(img.time)}:` });
    parts.push({ type: 'image_url', image_url: { url: img.url } });
  }
  return parts;
}
