// Runs Debian's tesseract (5.x) on one image and parses its TSV output: one row per word with
// its box and confidence (0–100; -1 for rows that are not words).
import { runProcess } from './process-runner.js';

export interface OcrWord {
  text: string;
  /** 0–1 (tesseract's 0–100 scaled). */
  confidence: number;
  left: number;
  top: number;
  width: number;
  height: number;
  /** block/paragraph/line numbers: words sharing them are on one line. */
  block: number;
  paragraph: number;
  line: number;
}

export interface TesseractOptions {
  binary?: string;
  /** Traineddata name(s), e.g. "eng" or "eng+deu". */
  language?: string;
  /** Page segmentation mode; 3 (automatic) by default, 11 for sparse text. */
  psm?: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

export const DEFAULT_TESSERACT_BINARY = 'tesseract';

export function tesseractArgs(imagePath: string, opts: Pick<TesseractOptions, 'language' | 'psm'>): string[] {
  // `-` writes to stdout; `tsv` is a config file shipped with tesseract that selects TSV output.
  // The path is given as it is: tesseract has no protocols, but a leading '-' would read as an option.
  const path = imagePath.startsWith('-') ? `./${imagePath}` : imagePath.replace(/^file:/, '');
  return [path, '-', '-l', opts.language ?? 'eng', '--psm', String(opts.psm ?? 3), 'tsv'];
}

/** Parses TSV rows of level 5 (words) with text. */
export function parseTesseractTsv(tsv: string): OcrWord[] {
  const words: OcrWord[] = [];
  for (const line of tsv.split('\n')) {
    const f = line.split('\t');
    if (f.length < 12 || f[0] !== '5') continue;
    const text = f.slice(11).join('\t').trim();
    const conf = Number(f[10]);
    if (!text || !Number.isFinite(conf) || conf < 0) continue;
    words.push({
      text,
      confidence: Math.min(1, conf / 100),
      block: Number(f[2]),
      paragraph: Number(f[3]),
      line: Number(f[4]),
      left: Number(f[6]),
      top: Number(f[7]),
      width: Number(f[8]),
      height: Number(f[9]),
    });
  }
  return words;
}

export async function runTesseract(imagePath: string, opts: TesseractOptions): Promise<OcrWord[]> {
  const res = await runProcess(opts.binary ?? DEFAULT_TESSERACT_BINARY, tesseractArgs(imagePath, opts), {
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
    maxOutputBytes: 8 * 1024 * 1024,
  });
  return parseTesseractTsv(res.stdout.toString('utf8'));
}
