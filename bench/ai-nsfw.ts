// NSFW engine benchmark, beside nsfwjs itself in the same process (issue: intelligence engines):
//   image  one image, file path -> scores, through mediad's engine (sharp decode + resize, TF.js WASM)
//          vs nsfwjs.classify on a warm model, fed the way a Node user feeds it without tfjs-node
//          (sharp decodes to RGB, tf.tensor3d, classify resizes to 224); target <= 1.5x
//   first  the engine's first call, with TF.js import, WASM start and model load
//   video  frames per second of nsfwVideo (ffmpeg samples and scales frames, the model classifies)
//   task   an nsfw task through the API (mediad started in this process: its HTTPS API on loopback
//          and its workers; created -> finished, the task's own timestamps) vs the same nsfwjs path
//          in the same process: the first task (model load) and the warm median (target <= 1.5x);
//          a video task's frames per second end to end
// Both sides share one TF.js core and WASM backend. nsfwjs imports the @tensorflow/tfjs umbrella,
// which mediad does not install: a resolve hook hands it core + layers, all of the umbrella it uses,
// plus the three chained tensor methods it calls (the umbrella registers them with its import).
// Run: npm run bench:nsfw   (results in bench/results/ai-nsfw.json)
import { createRequire, register } from 'node:module';
import os from 'node:os';
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { request } from 'undici';
import { nsfwImage, nsfwModel, nsfwVideo } from '../src/ai/index.js';
import { fixture } from '../test/helpers/fixtures.js';
import { upload } from '../test/helpers/ai-api.js';
import { startTestServer } from '../test/helpers/server.js';
import { waitForTask } from '../test/helpers/tasks.js';
import { ms } from './child.js';
import { fmt, median, writeResults } from './lib.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const require = createRequire(import.meta.url);

function registerUmbrellaShim(): void {
  const core = pathToFileURL(require.resolve('@tensorflow/tfjs-core')).href;
  const layers = pathToFileURL(require.resolve('@tensorflow/tfjs-layers')).href;
  const shim = `data:text/javascript,${encodeURIComponent(`export * from ${JSON.stringify(core)}; export * from ${JSON.stringify(layers)};`)}`;
  const hooks = `export async function resolve(specifier, context, next) {
    return specifier === '@tensorflow/tfjs' ? { url: ${JSON.stringify(shim)}, shortCircuit: true } : next(specifier, context);
  }`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
}

/**
 * nsfwjs's own model, warm, and the competitor's whole path from the file: decode with sharp, a
 * tensor, classify (nsfwjs resizes to 224 itself).
 */
async function nsfwjsPath(path: string) {
  const tf = await import('@tensorflow/tfjs-core');
  const method = (name: string, fn: (this: InstanceType<typeof tf.Tensor>, ...a: never[]) => unknown) =>
    Object.defineProperty(tf.Tensor.prototype, name, { value: fn, configurable: true, writable: true });
  method('toFloat', function () {
    return tf.cast(this, 'float32');
  });
  method('div', function (b: never) {
    return tf.div(this, b);
  });
  method('reshape', function (shape: never) {
    return tf.reshape(this, shape);
  });
  const nsfwjs = await import('nsfwjs');
  const t0 = performance.now();
  const reference = await nsfwjs.load('MobileNetV2');
  const nsfwjsLoadMs = performance.now() - t0;
  const competitor = async () => {
    const { data, info } = await sharp(path).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const tensor = tf.tensor3d(data, [info.height, info.width, 3], 'int32');
    try {
      return await reference.classify(tensor, 5);
    } finally {
      tensor.dispose();
    }
  };
  return { tf, reference, nsfwjsLoadMs, competitor };
}

async function benchImage(path: string) {
  const started = performance.now();
  const first = await nsfwImage(path);
  const firstMs = performance.now() - started;
  const loadMs = (await nsfwModel()).loadMs;

  const { tf, reference, nsfwjsLoadMs, competitor } = await nsfwjsPath(path);
  const { data, info } = await sharp(path).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const prepared = tf.tensor3d(data, [info.height, info.width, 3], 'int32');

  for (let i = 0; i < 3; i++) await Promise.all([nsfwImage(path), competitor()]); // warm-up, dropped
  const engine: number[] = [];
  const other: number[] = [];
  const classifyOnly: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    // Alternate which goes first so drift falls on both.
    const order = i % 2 === 0 ? ['engine', 'nsfwjs'] : ['nsfwjs', 'engine'];
    for (const side of order) {
      const s = performance.now();
      if (side === 'engine') await nsfwImage(path);
      else await competitor();
      (side === 'engine' ? engine : other).push(performance.now() - s);
    }
    const s = performance.now();
    await reference.classify(prepared, 5);
    classifyOnly.push(performance.now() - s);
  }
  prepared.dispose();
  const ratios = engine.map((e, i) => e / other[i]!);
  const predictions = await competitor();
  return {
    image: `${info.width}x${info.height}`,
    firstCallMs: firstMs,
    engineModelLoadMs: loadMs,
    nsfwjsLoadMs,
    engineMs: median(engine),
    nsfwjsMs: median(other),
    nsfwjsClassifyOnlyMs: median(classifyOnly),
    ratio: median(ratios),
    target: 1.5,
    engineScores: { nudity: first.nudity, sexual: first.sexual, classes: first.classes },
    nsfwjsTop: predictions[0],
  };
}

/** Runs in a process of its own (`--tasks`), so its first task loads the model as a fresh worker does. */
async function benchTasks(path: string) {
  // mediad in this very process (its API over HTTPS on loopback, its workers), so the task and
  // nsfwjs run on the same heap, the same TF.js backend and the same CPU state.
  const t = await startTestServer();
  try {
    const k = await t.key('bench', 'nsfw');
    const input = await upload(t, { key: k.key, projectId: k.project_id }, path, 'small.jpg');
    // Polled slowly: durations are the task's own timestamps, and a poll is work on this same thread.
    const run = async (body: object, pollMs: number) => {
      const created = await t.call('POST', '/tasks', { key: k.key, body: { kind: 'nsfw', ...body } });
      if (created.status !== 201) throw new Error(created.text);
      const done = await waitForTask(t, k.key, created.json.data.id, undefined, 600_000, pollMs);
      if (done.status !== 'completed') throw new Error(JSON.stringify(done.error));
      return done;
    };
    const first = await run({ file_id: input.id }, 250);
    const { competitor } = await nsfwjsPath(path);
    for (let i = 0; i < 3; i++) await Promise.all([run({ file_id: input.id }, 250), competitor()]); // warm-up
    const task: number[] = [];
    const other: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const order = i % 2 === 0 ? ['task', 'nsfwjs'] : ['nsfwjs', 'task'];
      for (const side of order) {
        if (side === 'task') {
          const done = await run({ file_id: input.id }, 250);
          task.push(ms(done.created, done.finished));
        } else {
          const s = performance.now();
          await competitor();
          other.push(performance.now() - s);
        }
      }
    }
    const video = await upload(t, { key: k.key, projectId: k.project_id }, await fixture('video-1080p-10s'), 'v.mp4');
    const vt = await run({ file_id: video.id, interval: 0.25 }, 250);
    const doc: any = await (await request(vt.output.url, { dispatcher: t.agent })).body.json();
    const videoMs = ms(vt.created, vt.finished);
    return {
      firstTaskMs: ms(first.created, first.finished),
      taskMs: median(task),
      nsfwjsMs: median(other),
      ratio: median(task.map((x, i) => x / other[i]!)),
      target: 1.5,
      video: {
        frames: doc.frames.count,
        taskMs: videoMs,
        framesPerSecond: (doc.frames.count * 1000) / videoMs,
        engineFramesPerSecond: doc.frames.per_second,
      },
    };
  } finally {
    await t.stop();
  }
}

async function benchVideo() {
  const path = await fixture('video-1080p-10s');
  const r = await nsfwVideo(path, { interval: 0.25 });
  return {
    video: '10 s 1080p H.264',
    interval: 0.25,
    frames: r.frames?.count ?? 0,
    framesPerSecond: r.frames?.per_second ?? 0,
  };
}

registerUmbrellaShim();
if (process.argv.includes('--tasks')) {
  process.stdout.write(`${JSON.stringify(await benchTasks(await fixture('image-jpeg')))}\n`);
  process.exit(0);
}
// The task part first, in a child process: a fresh process, as a worker is, and the model cold.
const task = await new Promise<Awaited<ReturnType<typeof benchTasks>>>((resolve, reject) => {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--tasks'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.on('exit', (code) =>
    code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!)) : reject(new Error(`task bench exited ${code}`)),
  );
});
const small = await benchImage(await fixture('image-jpeg'));
const large = await benchImage(await fixture('image-jpeg-4000x3000'));
const video = await benchVideo();
const results = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.availableParallelism(),
  runs: RUNS,
  small,
  large,
  video,
  task,
};
const file = await writeResults('ai-nsfw', results);
console.log(`\nnsfw: one image, file -> scores, median of ${RUNS} (warm model; TF.js WASM backend)`);
for (const r of [small, large]) {
  console.log(
    `  ${r.image} JPEG: engine ${fmt(r.engineMs)} ms | nsfwjs (sharp decode + tensor + classify) ${fmt(r.nsfwjsMs)} ms ` +
      `(classify alone ${fmt(r.nsfwjsClassifyOnlyMs)} ms) | engine/nsfwjs ${r.ratio.toFixed(2)}x (target <= 1.5) ${r.ratio <= 1.5 ? 'PASS' : 'FAIL'}`,
  );
  const top = Object.entries(r.engineScores.classes).sort((a, b) => b[1] - a[1])[0]!;
  console.log(
    `    top class: engine ${top[0]} ${top[1].toFixed(3)}, nsfwjs ${r.nsfwjsTop?.className} ${r.nsfwjsTop?.probability.toFixed(3)}`,
  );
}
console.log(
  `  first call (TF.js import, WASM start, model load, classify): ${fmt(small.firstCallMs)} ms, of which model ready after ${fmt(small.engineModelLoadMs)} ms; nsfwjs.load on the warm backend ${fmt(small.nsfwjsLoadMs)} ms`,
);
console.log(
  `video: ${video.video}, a frame every ${video.interval} s: ${video.frames} frames at ${fmt(video.framesPerSecond)} frames/s (ffmpeg sampling + classify)`,
);
console.log(
  `task: ${small.image} JPEG, created -> finished: first task (model load in the worker) ${task.firstTaskMs} ms; warm median ${fmt(task.taskMs)} ms | nsfwjs in this process ${fmt(task.nsfwjsMs)} ms | ratio ${task.ratio.toFixed(2)}x (target <= 1.5) ${task.ratio <= 1.5 ? 'PASS' : 'FAIL'}`,
);
console.log(
  `task: ${video.video}, a frame every 0.25 s: ${task.video.frames} frames in ${task.video.taskMs} ms = ${fmt(task.video.framesPerSecond)} frames/s end to end (engine ${fmt(task.video.engineFramesPerSecond)} frames/s)`,
);
console.log(`results: ${file}`);
