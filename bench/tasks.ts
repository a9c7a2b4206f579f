// Task engine benchmarks (issue: task engine and transform kinds), each beside its competitor in the same run:
//   image  4000x3000 JPEG -> 800 px WebP: task (created -> finished, the task's own timestamps) vs sharp vs vipsthumbnail
//   video  10 s 1080p H.264 -> 720p H.264: task vs raw ffmpeg with the identical argument list
//   queue  pickup latency (created -> started) over 200 tasks with idle workers, and throughput of 200 small image tasks
// Run: npm run bench:tasks   (mediad runs as a child process on loopback; results in bench/results/tasks.json)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { api, listMeta, median, ms, pct, startMediad, upload, waitDone, type Mediad } from './child.js';
import { buildVideoArgs, crfFor, probeFile } from '../src/media/index.js';
import { fixture } from '../test/helpers/fixtures.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);

/**
 * Median of the per-pair ratios: each pair runs back to back, so this cancels the machine's
 * drift between pairs (an encode varies by a few percent from one minute to the next).
 */
const pairedRatio = (task: number[], raw: number[]) => median(task.map((t, i) => t / raw[i]!));

async function benchImage(m: Mediad) {
  const src = await fixture('image-jpeg-4000x3000');
  const input = await upload(m, src, 'big.jpg');
  const out = path.join(os.tmpdir(), `bench-${process.pid}.webp`);
  const task: number[] = [];
  const raw: number[] = [];
  const vips: number[] = [];
  for (let i = 0; i < RUNS + 1; i++) {
    const t = await waitDone(
      m,
      (await api(m, 'POST', '/tasks', { kind: 'image', file_id: input.id, width: 800, format: 'webp', quality: 80 }))
        .id,
      100,
    );
    let s = performance.now();
    await sharp(src).rotate().resize({ width: 800 }).webp({ quality: 80 }).toFile(out);
    const rawMs = performance.now() - s;
    s = performance.now();
    execFileSync('vipsthumbnail', [src, '--size', '800x', '-o', `${out}[Q=80]`]);
    const vipsMs = performance.now() - s;
    if (i === 0) continue; // warm-up
    task.push(ms(t.created, t.finished));
    raw.push(rawMs);
    vips.push(vipsMs);
  }
  return {
    taskMs: median(task),
    sharpMs: median(raw),
    vipsthumbnailMs: median(vips),
    ratio: pairedRatio(task, raw),
    target: 1.15,
  };
}

async function benchVideo(m: Mediad) {
  const src = await fixture('video-1080p-10s');
  const input = await upload(m, src, 'big.mp4');
  const options = { height: 720, quality: 60, preset: 'veryfast' } as const;
  const probe = await probeFile(src, { maxPixels: 1e9, maxDurationSeconds: 1e6 });
  // The exact argument list the task builds, run by hand: the only difference is mediad around it.
  const out = path.join(os.tmpdir(), `bench-${process.pid}.mp4`);
  // The task caps its output at MEDIAD_MAX_DURATION_SECONDS (default 14400): the same -t here.
  const args = buildVideoArgs(
    src,
    out,
    { format: 'mp4', codec: 'h264', fit: 'contain', position: 'center', background: '#000000', ...options },
    probe,
    { maxDurationSeconds: 14400 },
  );
  const task: number[] = [];
  const raw: number[] = [];
  // Pairs alternate which side goes first; the ratio is the median over RUNS pairs.
  const runTask = async () => {
    const t = await waitDone(
      m,
      (await api(m, 'POST', '/tasks', { kind: 'video', file_id: input.id, ...options })).id,
      250,
    );
    task.push(ms(t.created, t.finished));
  };
  const runRaw = () => {
    const s = performance.now();
    execFileSync('ffmpeg', args, { stdio: 'ignore' });
    raw.push(performance.now() - s);
  };
  for (let i = 0; i < RUNS; i++) {
    if (i % 2 === 0) {
      await runTask();
      runRaw();
    } else {
      runRaw();
      await runTask();
    }
  }
  return {
    crf: crfFor('h264', options.quality),
    preset: options.preset,
    taskMs: median(task),
    ffmpegMs: median(raw),
    ratio: pairedRatio(task, raw),
    target: 1.05,
  };
}

async function benchQueue(m: Mediad) {
  const small = await upload(m, await fixture('image-png'), 'small.png');
  // Pickup: one task at a time, so a worker is always idle when it arrives.
  const pickup: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = await waitDone(m, (await api(m, 'POST', '/tasks', { kind: 'image', file_id: small.id, width: 16 })).id);
    pickup.push(ms(t.created, t.started));
  }
  // Throughput: 200 at once with the default concurrency (the number of cores).
  const s = performance.now();
  const before = (await listMeta(m, '/tasks?status=completed&kind=image&limit=1')).total as number;
  for (let i = 0; i < 200; i++)
    await api(m, 'POST', '/tasks', { kind: 'image', file_id: small.id, width: 8 + (i % 32) });
  // One poll of a count, not 200 pollers: the API shares the machine with the workers.
  while ((await listMeta(m, '/tasks?status=completed&kind=image&limit=1')).total < before + 200)
    await new Promise((r) => setTimeout(r, 20));
  const seconds = (performance.now() - s) / 1000;
  return {
    pickupP50Ms: pct(pickup, 50),
    pickupP99Ms: pct(pickup, 99),
    pickupTargetMs: 20,
    throughputTasksPerS: 200 / seconds,
  };
}

const m = await startMediad();
try {
  const image = await benchImage(m);
  const video = await benchVideo(m);
  const queue = await benchQueue(m);
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.availableParallelism(),
    runs: RUNS,
    image,
    video,
    queue,
  };
  await fs.mkdir('bench/results', { recursive: true });
  await fs.writeFile('bench/results/tasks.json', `${JSON.stringify(results, null, 2)}\n`);
  const f = (n: number) => n.toFixed(1);
  console.log(`\nimage 4000x3000 JPEG -> 800 px WebP (median of ${RUNS})`);
  console.log(
    `  mediad task ${f(image.taskMs)} ms | sharp ${f(image.sharpMs)} ms | vipsthumbnail ${f(image.vipsthumbnailMs)} ms | task/sharp ${image.ratio.toFixed(2)}x (target <= 1.15) ${image.ratio <= 1.15 ? 'PASS' : 'FAIL'}`,
  );
  console.log(`video 10 s 1080p -> 720p H.264 CRF ${video.crf} ${video.preset}`);
  console.log(
    `  mediad task ${f(video.taskMs)} ms | raw ffmpeg ${f(video.ffmpegMs)} ms | ratio ${video.ratio.toFixed(3)}x (target <= 1.05) ${video.ratio <= 1.05 ? 'PASS' : 'FAIL'}`,
  );
  console.log('queue');
  console.log(
    `  pickup p50 ${queue.pickupP50Ms} ms, p99 ${queue.pickupP99Ms} ms (target p50 < 20 ms) ${queue.pickupP50Ms < 20 ? 'PASS' : 'FAIL'} | throughput ${f(queue.throughputTasksPerS)} small image tasks/s`,
  );
} finally {
  m.child.kill('SIGTERM');
  await fs.rm(m.dataDir, { recursive: true, force: true }).catch(() => undefined);
}
