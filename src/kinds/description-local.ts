import fs from 'node:fs/promises';
import path from 'node:path';
import {
  findSceneCuts,
  grabKeyframes,
  nsfwImage,
  ocrImage,
  titleFromOcr,
  titleFromSpeech,
  type NsfwClasses,
  type OcrLine,
  type SpeechResult,
} from '../ai/index.js';
import type { KindContext, KindInput } from './define.js';
import { engineUse, type EngineUse, type Engines } from './engines.js';
import { excerpt } from './intelligence.js';

// The description a machine without a language model can honestly give: what the file is
// (kind, size, length, sound), the text on screen (OCR), what the NSFW classifier makes of it and
// how the speech begins. Nothing is guessed: every sentence says where it comes from.

type Ctx = Pick<KindContext<unknown>, 'workDir' | 'signal' | 'config'>;

const CLASS_WORDS: Record<keyof NsfwClasses, string> = {
  neutral: 'a neutral photograph or picture',
  drawing: 'a drawing or illustration',
  sexy: 'suggestive content',
  porn: 'explicit content',
  hentai: 'explicit drawn content',
};

const CLASSES: (keyof NsfwClasses)[] = ['neutral', 'drawing', 'sexy', 'porn', 'hentai'];
const FRAMES = 4;
const seconds = (s: number) => (s >= 90 ? `${Math.floor(s / 60)} min ${Math.round(s % 60)} s` : `${Math.round(s)} s`);

interface Seen {
  /** OCR lines of each image looked at (the image, or a frame per scene). */
  lines: OcrLine[][];
  classes: NsfwClasses | null;
  scenes: number | null;
  uses: EngineUse[];
}

/** OCR and the NSFW classes of the image, or of a frame per scene of a video. */
async function look(ctx: Ctx, input: KindInput, e: Engines): Promise<Seen> {
  const uses: EngineUse[] = [];
  let images = [input.path];
  let scenes: number | null = null;
  const dir = await fs.mkdtemp(path.join(ctx.workDir, 'look-'));
  try {
    if (input.probe.kind === 'video') {
      const duration = input.probe.duration ?? 0;
      const cuts = await findSceneCuts(input.path, { probe: input.probe, signal: ctx.signal });
      scenes = cuts.length + 1;
      const bounds = [0, ...cuts.map((c) => c.time), duration];
      const middles = bounds.slice(0, -1).map((s, i) => (s + bounds[i + 1]!) / 2);
      const picked =
        middles.length <= FRAMES ? middles : middles.filter((_, i) => i % Math.ceil(middles.length / FRAMES) === 0);
      images = (await grabKeyframes(input.path, picked, dir, { duration, signal: ctx.signal })).map((k) => k.path);
      uses.push({ role: 'scenes', name: 'ffmpeg-scdet', model: null, version: null });
    }
    const lines: OcrLine[][] = [];
    if (e.local.ocr.found) {
      for (const img of images) lines.push((await ocrImage(img, { signal: ctx.signal })).lines);
      uses.push({ role: 'text', name: 'tesseract', model: e.local.ocr.model, version: e.local.ocr.version });
    }
    let classes: NsfwClasses | null = null;
    if (e.local.nsfw.found) {
      for (const img of images) {
        const r = await nsfwImage(img, { signal: ctx.signal, maxPixels: ctx.config.limits.maxPixels });
        // The frame the classifier is least sure is neutral speaks for the file.
        if (!classes || r.classes.neutral + r.classes.drawing < classes.neutral + classes.drawing) classes = r.classes;
        if (uses.every((u) => u.role !== 'classes')) uses.push(engineUse('classes', r.engine));
      }
    }
    return { lines, classes, scenes, uses };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

const unique = (values: string[]) => [...new Set(values)];
const r3 = (v: number) => Math.round(v * 1000) / 1000;
const rounded = (c: NsfwClasses): NsfwClasses => ({
  drawing: r3(c.drawing),
  hentai: r3(c.hentai),
  neutral: r3(c.neutral),
  porn: r3(c.porn),
  sexy: r3(c.sexy),
});

export async function localDescription(ctx: Ctx, input: KindInput, e: Engines, speech: SpeechResult | null) {
  const p = input.probe;
  const seen = await look(ctx, input, e);
  const text = unique(
    seen.lines
      .flat()
      .filter((l) => l.confidence >= 0.8)
      .map((l) => l.text),
  ).slice(0, 8);
  const spoken = speech?.detected ? excerpt(speech) : null;
  const size = p.width && p.height ? `${p.width}×${p.height}` : null;
  const facts = [
    p.kind === 'video'
      ? `A ${seconds(p.duration ?? 0)} ${size ?? ''} video`.replace('  ', ' ')
      : `A ${size ?? ''} image`,
    p.format ? `(${p.format})` : '',
    p.kind === 'video' ? (p.hasAudio ? 'with sound' : 'without sound') : '',
  ]
    .filter(Boolean)
    .join(' ');
  const sentences = [`${facts}.`];
  if (seen.scenes !== null) sentences.push(`It has ${seen.scenes} scene${seen.scenes === 1 ? '' : 's'}.`);
  if (text.length > 0) sentences.push(`Text on screen reads: ${text.map((t) => `"${t}"`).join(', ')}.`);
  if (spoken) sentences.push(`Speech${speech?.language ? ` (${speech.language})` : ''} begins: "${spoken}".`);
  else if (p.hasAudio && speech) sentences.push('No speech was recognised.');
  let top: keyof NsfwClasses | null = null;
  if (seen.classes) {
    const c = seen.classes;
    top = CLASSES.reduce((a, b) => (c[b] > c[a] ? b : a));
    sentences.push(`The local image classifier sees ${CLASS_WORDS[top]} (${top} ${c[top].toFixed(2)}).`);
  }
  // The first image (frame) whose text reads as a title: a video's opening card.
  const ocrTitle = seen.lines.map((l) => titleFromOcr(l)).find((x) => x !== null) ?? null;
  const title =
    ocrTitle ??
    (speech?.detected ? titleFromSpeech(speech.words) : null) ??
    `${p.kind === 'video' ? 'Video' : 'Image'}${size ? ` ${size}` : ''}${p.kind === 'video' ? `, ${seconds(p.duration ?? 0)}` : ''}`;
  const orientation =
    p.width && p.height ? (p.width > p.height ? 'landscape' : p.width < p.height ? 'portrait' : 'square') : null;
  const tags = unique(
    [
      p.kind,
      orientation,
      p.kind === 'video' ? (p.hasAudio ? 'sound' : 'silent') : null,
      spoken ? 'speech' : null,
      speech?.detected ? speech.language : null,
      text.length > 0 ? 'text' : null,
      top,
    ].filter((t): t is string => Boolean(t)),
  );
  return {
    title,
    description: sentences.join(' '),
    tags,
    facts: {
      kind: p.kind,
      ...(p.width ? { width: p.width, height: p.height } : {}),
      ...(p.duration ? { duration: p.duration } : {}),
      format: p.format,
      has_audio: p.hasAudio,
      ...(seen.scenes !== null ? { scenes: seen.scenes } : {}),
      text,
      speech: spoken,
      ...(seen.classes ? { classes: rounded(seen.classes) } : {}),
    },
    uses: seen.uses,
  };
}
