// Runs Debian's pocketsphinx_continuous (CMU Sphinx) on raw 16 kHz mono PCM and parses its
// `-time yes` output: one hypothesis line per utterance, then `word start end confidence` lines.
import { stat } from 'node:fs/promises';
import { runProcess } from './process-runner.js';

export interface PocketsphinxModel {
  /** The pocketsphinx_continuous binary. */
  binary: string;
  /** Short model name reported with results, e.g. "en-us". */
  name: string;
  /** ISO 639-1 language the model recognises. */
  language: string;
  /** Acoustic model directory (-hmm), language model (-lm) and pronunciation dictionary (-dict). */
  hmm: string;
  lm: string;
  dict: string;
}

const EN_US = '/usr/share/pocketsphinx/model/en-us';

/** Debian's pocketsphinx-en-us package. */
export const DEFAULT_POCKETSPHINX_MODEL: Readonly<PocketsphinxModel> = {
  binary: 'pocketsphinx_continuous',
  name: 'en-us',
  language: 'en',
  hmm: `${EN_US}/en-us`,
  lm: `${EN_US}/en-us.lm.bin`,
  dict: `${EN_US}/cmudict-en-us.dict`,
};

export interface PocketsphinxWord {
  word: string;
  /** Seconds from the start of the PCM given to the run. */
  start: number;
  end: number;
  /** Posterior probability, clamped to 0–1 (pocketsphinx prints values a hair above 1). */
  confidence: number;
}

/**
 * argv for one file. A name not ending in .wav makes pocketsphinx read headerless PCM at its
 * default -samprate 16000; its log goes to /dev/null (the word lines are all we read).
 */
export function pocketsphinxArgs(model: PocketsphinxModel, rawPcmPath: string): string[] {
  return [
    '-infile',
    rawPcmPath,
    '-time',
    'yes',
    '-logfn',
    '/dev/null',
    '-hmm',
    model.hmm,
    '-lm',
    model.lm,
    '-dict',
    model.dict,
  ];
}

const WORD_LINE = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)$/i;

/** Sentence markers, silence and noise fillers (`<s>`, `</s>`, `<sil>`, `[NOISE]`, `++UH++`). */
function isFiller(word: string): boolean {
  return /^[<[+]/.test(word);
}

/** A word line -> a word; hypothesis lines, fillers and anything else -> null. */
export function parsePocketsphinxLine(line: string): PocketsphinxWord | null {
  const m = WORD_LINE.exec(line.trim());
  if (!m) return null;
  const raw = m[1]!;
  if (isFiller(raw)) return null;
  // "to(2)": the second pronunciation of "to" in the dictionary.
  const word = raw.replace(/\(\d+\)$/, '');
  const start = Number(m[2]);
  const end = Number(m[3]);
  const confidence = Math.min(1, Math.max(0, Number(m[4])));
  if (!word || !Number.isFinite(start) || !Number.isFinite(end) || end < start) return null;
  return { word, start, end, confidence };
}

/** Missing model files make pocketsphinx exit with nothing but its (discarded) log: say which. */
export async function missingModelFiles(model: PocketsphinxModel): Promise<string[]> {
  const checks = await Promise.all(
    [model.hmm, model.lm, model.dict].map(async (p) => ((await stat(p).catch(() => null)) ? null : p)),
  );
  return checks.filter((p): p is string => p !== null);
}

export interface PocketsphinxRunOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Called for each recognised word as its utterance completes. */
  onWord?: (word: PocketsphinxWord) => void;
}

/** Recognises one raw PCM file; words in order, times relative to the file's start. */
export async function runPocketsphinx(
  rawPcmPath: string,
  model: PocketsphinxModel,
  opts: PocketsphinxRunOptions,
): Promise<PocketsphinxWord[]> {
  const words: PocketsphinxWord[] = [];
  await runProcess(model.binary, pocketsphinxArgs(model, rawPcmPath), {
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
    onStdoutLine: (line) => {
      const w = parsePocketsphinxLine(line);
      if (!w) return;
      words.push(w);
      opts.onWord?.(w);
    },
  });
  return words;
}
