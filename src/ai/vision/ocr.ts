// Text in an image with tesseract (Debian tesseract-ocr + tesseract-ocr-eng): words filtered
// by confidence (tesseract returns garbage with low confidence on busy frames), grouped in lines.
import { ProcessError, runTesseract, toolVersion, type OcrWord } from '../../media/index.js';
import type { EngineInfo } from '../engine.js';
import { EngineUnavailableError } from '../errors.js';

export interface OcrLine {
  text: string;
  /** Mean confidence (0–1) of the line's kept words. */
  confidence: number;
  top: number;
  height: number;
}

export interface OcrResult {
  /** Kept lines, top to bottom, joined with newlines. */
  text: string;
  lines: OcrLine[];
  words: OcrWord[];
  engine: EngineInfo;
}

export interface OcrOptions {
  /** Words below this confidence (0–1, default 0.6) are dropped. */
  minConfidence?: number;
  /** Tesseract language(s), default "eng". */
  language?: string;
  /** Page segmentation mode (default 3, automatic). */
  psm?: number;
  binary?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

let versionLookup: Promise<string | null> | null = null;

export function tesseractVersion(binary = 'tesseract'): Promise<string | null> {
  versionLookup ??= toolVersion(binary, ['--version'], /tesseract\s+v?(\d[\w.-]*)/i);
  return versionLookup;
}

export function ocrLines(words: readonly OcrWord[], minConfidence: number): OcrLine[] {
  const lines = new Map<string, OcrWord[]>();
  for (const w of words) {
    if (w.confidence < minConfidence || !/[\p{L}\p{N}]/u.test(w.text)) continue;
    const key = `${w.block}.${w.paragraph}.${w.line}`;
    const list = lines.get(key) ?? [];
    list.push(w);
    lines.set(key, list);
  }
  return [...lines.values()]
    .map((ws) => ({
      text: ws.map((w) => w.text).join(' '),
      confidence: ws.reduce((a, w) => a + w.confidence, 0) / ws.length,
      top: Math.min(...ws.map((w) => w.top)),
      height: Math.max(...ws.map((w) => w.top + w.height)) - Math.min(...ws.map((w) => w.top)),
    }))
    .sort((a, b) => a.top - b.top);
}

export async function ocrImage(imagePath: string, opts: OcrOptions = {}): Promise<OcrResult> {
  const minConfidence = opts.minConfidence ?? 0.6;
  const language = opts.language ?? 'eng';
  let words: OcrWord[];
  try {
    words = await runTesseract(imagePath, {
      binary: opts.binary,
      language,
      psm: opts.psm,
      timeoutMs: opts.timeoutMs ?? 60_000,
      signal: opts.signal,
    });
  } catch (err) {
    if (err instanceof ProcessError && err.reason === 'spawn') {
      throw new EngineUnavailableError(
        'tesseract',
        'OCR is not available: tesseract could not be started. Install it with `apt-get install -y tesseract-ocr tesseract-ocr-eng`.',
        { cause: err },
      );
    }
    if (
      err instanceof ProcessError &&
      err.reason === 'exit' &&
      /Failed loading language|Error opening data file/i.test(err.stderrTail)
    ) {
      throw new EngineUnavailableError(
        'tesseract',
        `OCR is not available for "${language}": install its traineddata (e.g. apt-get install -y tesseract-ocr-eng).`,
        { cause: err },
      );
    }
    throw err;
  }
  const lines = ocrLines(words, minConfidence);
  return {
    text: lines.map((l) => l.text).join('\n'),
    lines,
    words: words.filter((w) => w.confidence >= minConfidence),
    engine: { name: 'tesseract', model: language, version: await tesseractVersion(opts.binary) },
  };
}
