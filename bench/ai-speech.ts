// Local speech benchmark, beside pocketsphinx itself in the same run (issues: intelligence engines,
// intelligence kinds), on the same 16 kHz mono WAV with the same model:
//   engine  transcribeLocal (probe, ffmpeg decode to PCM, quiet-point chunks of 120 s, one
//           pocketsphinx run per chunk, merge) in this process
//   task    a speech task through the API (mediad serve as a child process; created -> finished,
//           the task's own timestamps): the engine plus claiming, the JSON output stored, the media's
//           metadata, the completion
//   direct  pocketsphinx_continuous run directly on the WAV
// Targets: engine and task <= 1.10x direct (median of paired ratios). Word error rates of all three
// against the text flite spoke show the chunking costs no accuracy.
// Run: npm run bench:speech   (results in bench/results/ai-speech.json)
import { spawn } from 'node:child_process';
import { request } from 'undici';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_POCKETSPHINX_MODEL, parsePocketsphinxLine, pocketsphinxArgs } from '../src/media/index.js';
import { DEFAULT_LOCAL_CHUNK_SECONDS, transcribeLocal } from '../src/ai/index.js';
import { chunkTargets } from '../src/ai/speech/chunks.js';
import { spokenParagraph, spokenWav } from '../test/helpers/ai-fixtures.js';
import { api, ms, startMediad, upload, waitDone } from './child.js';
import { wordErrorRate } from '../test/helpers/wer.js';
import { fmt, median, writeResults } from './lib.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);

const SENTENCES = [
  'Good morning everyone and welcome to the weekly meeting.',
  'Please open the window and let some fresh air into the room.',
  'The children played in the park until the sun went down.',
  'The weather today is sunny with a light breeze from the west.',
  'We will start with a short review of last week.',
  'The new office on the second floor is almost ready.',
  'Most of the boxes have been moved over the weekend.',
  'Please take your things from the old desks by Friday.',
  'The kitchen will be closed for cleaning on Tuesday.',
  'Our team finished the report two days early.',
  'Thank you all for the hard work and the long hours.',
  'Next month we will hire three more people.',
  'If you know someone good, please send me their name.',
  'The training for the new system starts in the morning.',
  'Bring a laptop and a pair of headphones.',
  'Lunch will be served at noon in the main hall.',
  'The parking lot will be painted next week.',
  'Please park on the street until the work is done.',
  'We have moved the fire drill to the first of the month.',
  'Everyone should know the way to the nearest exit.',
  'The printer on the third floor is working again.',
  'Please report any problems to the help desk.',
  'The summer party will be held in the garden.',
  'Families and friends are welcome to join us.',
  'There will be music and games for the children.',
  'We need a few people to help set up the tables.',
  'Sign up on the list by the front door.',
  'Our customers have been very happy with the new service.',
  'Sales were higher this quarter than last year.',
  'We will share the full numbers at the end of the month.',
  'Remember to lock the doors when you leave at night.',
  'The lights in the hallway will turn off at ten.',
  'Next week the meeting will start one hour later.',
  'Please read the notes before we meet again.',
  'That is all for today and thank you for coming.',
  'Have a good week and see you all on Monday.',
];

interface DirectRun {
  ms: number;
  words: string[];
}

/** pocketsphinx_continuous on the WAV, exactly as documented for this model; stdout parsed the same way. */
function direct(wav: string): Promise<DirectRun> {
  const m = DEFAULT_POCKETSPHINX_MODEL;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(m.binary, pocketsphinxArgs(m, wav), { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`pocketsphinx_continuous exited with ${code}`));
      const words = out
        .split('\n')
        .map(parsePocketsphinxLine)
        .flatMap((w) => (w ? [w.word] : []));
      resolve({ ms: performance.now() - started, words });
    });
  });
}

// Read twice: about 280 s, so the engine cuts it into 3 chunks of about 120 s.
const SPOKEN = [...SENTENCES, ...SENTENCES];
const wav = await spokenParagraph(SPOKEN, 1);
const reference = SPOKEN.join(' ');
const work = await mkdtemp(path.join(os.tmpdir(), 'mediad-bench-speech-'));
const engineMs: number[] = [];
const directMs: number[] = [];
const taskMs: number[] = [];
const taskDirectMs: number[] = [];
let engineText = '';
let directText = '';
let taskText = '';
let duration = 0;
let chunks = 0;
try {
  for (let i = 0; i < RUNS; i++) {
    // Alternate which side goes first: the machine's speed drifts between minutes.
    const runEngine = async () => {
      const s = performance.now();
      const r = await transcribeLocal(wav, { workDir: work, onProgress: () => {} });
      engineMs.push(performance.now() - s);
      engineText = r.words.map((w) => w.text).join(' ');
      duration = r.duration;
      chunks = chunkTargets(r.duration, { chunkSeconds: DEFAULT_LOCAL_CHUNK_SECONDS }).length + 1;
    };
    const runDirect = async () => {
      const d = await direct(wav);
      directMs.push(d.ms);
      directText = d.words.join(' ');
    };
    if (i % 2 === 0) {
      await runEngine();
      await runDirect();
    } else {
      await runDirect();
      await runEngine();
    }
    console.log(`pair ${i + 1}: engine ${fmt(engineMs.at(-1)!, 0)} ms, direct ${fmt(directMs.at(-1)!, 0)} ms`);
  }
} finally {
  await rm(work, { recursive: true, force: true });
}

// The task: mediad serve in a child process; polled slowly (durations are the task's timestamps).
const m = await startMediad();
try {
  const input = await upload(m, wav, 'speech.wav');
  // Warm-up on a short clip: the worker looks for its local engines once, at its first speech task.
  const short = await upload(m, await spokenWav('Good morning everyone.'), 'short.wav');
  await waitDone(m, (await api(m, 'POST', '/tasks', { kind: 'speech', file_id: short.id })).id, 200);
  for (let i = 0; i < RUNS; i++) {
    const runTask = async () => {
      const t = await waitDone(m, (await api(m, 'POST', '/tasks', { kind: 'speech', file_id: input.id })).id, 1000);
      taskMs.push(ms(t.created, t.finished));
      const doc: any = await (await request(t.output.url, { dispatcher: m.agent })).body.json();
      taskText = doc.timeline.flatMap((s: any) => s.words.map((w: any) => w.text)).join(' ');
    };
    const runDirect = async () => taskDirectMs.push((await direct(wav)).ms);
    if (i % 2 === 0) {
      await runTask();
      await runDirect();
    } else {
      await runDirect();
      await runTask();
    }
    console.log(`task pair ${i + 1}: task ${fmt(taskMs.at(-1)!, 0)} ms, direct ${fmt(taskDirectMs.at(-1)!, 0)} ms`);
  }
} finally {
  m.child.kill('SIGTERM');
  await m.agent.close();
  await rm(m.dataDir, { recursive: true, force: true });
}

const ratio = median(engineMs.map((e, i) => e / directMs[i]!));
const taskRatio = median(taskMs.map((e, i) => e / taskDirectMs[i]!));
const results = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.availableParallelism(),
  runs: RUNS,
  audioSeconds: duration,
  chunks,
  engineMs: median(engineMs),
  directMs: median(directMs),
  ratio,
  taskMs: median(taskMs),
  taskDirectMs: median(taskDirectMs),
  taskRatio,
  target: 1.1,
  realTimeFactor: median(engineMs) / 1000 / duration,
  werEngine: wordErrorRate(reference, engineText),
  werDirect: wordErrorRate(reference, directText),
  werTask: wordErrorRate(reference, taskText),
};
const file = await writeResults('ai-speech', results);
console.log(`\nspeech: ${fmt(duration)} s of flite speech (16 kHz mono WAV), median of ${RUNS} pairs`);
console.log(
  `  engine ${fmt(results.engineMs, 0)} ms (${chunks} chunks) | pocketsphinx_continuous directly ${fmt(results.directMs, 0)} ms | ratio ${ratio.toFixed(3)}x (target <= 1.10) ${ratio <= 1.1 ? 'PASS' : 'FAIL'}`,
);
console.log(
  `  task (created -> finished) ${fmt(results.taskMs, 0)} ms | pocketsphinx_continuous directly ${fmt(results.taskDirectMs, 0)} ms | ratio ${taskRatio.toFixed(3)}x (target <= 1.10) ${taskRatio <= 1.1 ? 'PASS' : 'FAIL'}`,
);
console.log(
  `  real-time factor ${results.realTimeFactor.toFixed(3)} | WER engine ${results.werEngine.toFixed(3)}, task ${results.werTask.toFixed(3)}, direct ${results.werDirect.toFixed(3)}`,
);
console.log(`results: ${file}`);
