// Task engine benchmarks (issue: task engine and transform kinds; issue 26: the tasks' overhead), each beside
// its competitor in the same run:
//   image  4000x3000 JPEG -> 800 px WebP: task (created -> finished, the task's own timestamps) vs sharp vs
//          vipsthumbnail, wall time and CPU time (the server's, from /proc, against sharp's in this process)
//   video  10 s 1080p H.264 -> 720p H.264: task vs raw ffmpeg with the identical argument list, wall and CPU
//   queue  pickup latency (created -> started) over 200 tasks with an idle worker
//   small  throughput of 200 small image tasks (64x48 PNG -> 8..39 px) queued while the kind is paused, then
//          resumed (first started -> last finished), beside a raw sharp loop doing the same resizes at the
//          same concurrency, in alternating rounds; on SQLite in `mediad serve` and on PostgreSQL with two
//          `mediad worker` processes; and beside the same loop fsyncing each output and its directory
//          (on PostgreSQL also beside that loop with each resize claimed and marked done in a table: the
//          floor of a durable queue)
//   A/A control: each comparison also runs its raw side twice in the pair (or round); that ratio
//   is the noise floor a task/raw ratio must be read against.
//   Where a task's time goes: the mean of each phase (claim, setup, input, run, store, commit, cleanup)
//   from GET /metrics (mediad_task_phase_seconds), per section.
// Run: npm run bench:tasks   (mediad runs as a child process on loopback; results in bench/results/tasks.json)
//   BENCH_RUNS (pairs, default 7), BENCH_ROUNDS (throughput rounds, default 3), BENCH_ONLY=image,video,queue,small,pg
//   BENCH_WARMUP (small-task batches before the rounds, default 1): V8 still compiles a new worker's
//   hot paths over its first ~800 tasks (docs/benchmarks.md), so 8 measures a warm process instead
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import sharp from 'sharp';
import {
  api,
  median,
  ms,
  pct,
  phaseMeans,
  processCpuMs,
  startMediad,
  taskPhases,
  upload,
  waitDone,
  type Mediad,
} from './child.js';
import { buildVideoArgs, crfFor, probeFile } from '../src/media/index.js';
import { fixture } from '../test/helpers/fixtures.js';
import { freshPg, mediadCommand } from './lib.js';
import { queueSmallBatch, rawSharpLoop, smallResize } from './small-tasks.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ONLY = new Set((process.env.BENCH_ONLY ?? 'image,video,queue,small,pg').split(','));
const SMALL_TASKS = 200;
// At least one: the warm-up batch also waits for every worker process to be up.
const WARMUP_BATCHES = Math.max(1, Math.floor(Number(process.env.BENCH_WARMUP ?? 1)) || 1);

/**
 * Median of the per-pair ratios: each pair runs back to back, so this cancels the machine's
 * drift between pairs (an encode varies by a few percent from one minute to the next).
 */
const pairedRatio = (task: number[], raw: number[]) => median(task.map((t, i) => t / raw[i]!));
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const loadAvg = () => os.loadavg().map((l) => Number(l.toFixed(2)));

async function benchImage(m: Mediad) {
  const src = await fixture('image-jpeg-4000x3000');
  const input = await upload(m, src, 'big.jpg');
  const out = path.join(os.tmpdir(), `bench-${process.pid}.webp`);
  const task: number[] = [];
  const taskCpu: number[] = [];
  const raw: number[] = [];
  const raw2: number[] = [];
  const rawCpu: number[] = [];
  const vips: number[] = [];
  let phasesBefore = await taskPhases(m, 'image');
  for (let i = 0; i < RUNS + 1; i++) {
    const cpu0 = await processCpuMs(m.child.pid!);
    const t = await waitDone(
      m,
      (await api(m, 'POST', '/tasks', { kind: 'image', file_id: input.id, width: 800, format: 'webp', quality: 80 }))
        .id,
      100,
    );
    const cpu1 = await processCpuMs(m.child.pid!);
    const c = process.cpuUsage();
    let s = performance.now();
    await sharp(src).rotate().resize({ width: 800 }).webp({ quality: 80 }).toFile(out);
    const rawMs = performance.now() - s;
    const cu = process.cpuUsage(c);
    s = performance.now();
    await sharp(src).rotate().resize({ width: 800 }).webp({ quality: 80 }).toFile(out);
    const raw2Ms = performance.now() - s;
    s = performance.now();
    execFileSync('vipsthumbnail', [src, '--size', '800x', '-o', `${out}[Q=80]`]);
    const vipsMs = performance.now() - s;
    if (i === 0) {
      phasesBefore = await taskPhases(m, 'image'); // warm-up
      continue;
    }
    task.push(ms(t.created, t.finished));
    taskCpu.push(cpu1 - cpu0);
    raw.push(rawMs);
    raw2.push(raw2Ms);
    rawCpu.push((cu.user + cu.system) / 1000);
    vips.push(vipsMs);
  }
  return {
    taskMs: median(task),
    sharpMs: median(raw),
    vipsthumbnailMs: median(vips),
    ratio: pairedRatio(task, raw),
    controlRatio: pairedRatio(raw2, raw),
    // The server's CPU per task (its POST and status polls included; /proc counts in 10 ms ticks, so summed over the runs).
    taskCpuMs: sum(taskCpu) / taskCpu.length,
    sharpCpuMs: sum(rawCpu) / rawCpu.length,
    cpuRatio: sum(taskCpu) / sum(rawCpu),
    phasesMs: phaseMeans(phasesBefore, await taskPhases(m, 'image')),
    target: 1.05,
    load: loadAvg(),
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
  const taskCpu: number[] = [];
  const raw: number[] = [];
  const raw2: number[] = [];
  const rawCpu: number[] = [];
  const phasesBefore = await taskPhases(m, 'video');
  // Pairs alternate which side goes first; the ratio is the median over RUNS pairs.
  const runTask = async () => {
    const cpu0 = await processCpuMs(m.child.pid!);
    const t = await waitDone(
      m,
      (await api(m, 'POST', '/tasks', { kind: 'video', file_id: input.id, ...options })).id,
      250,
    );
    taskCpu.push((await processCpuMs(m.child.pid!)) - cpu0);
    task.push(ms(t.created, t.finished));
  };
  const runRaw = async () => {
    const cpu0 = await processCpuMs(process.pid);
    const s = performance.now();
    execFileSync('ffmpeg', args, { stdio: 'ignore' });
    raw.push(performance.now() - s);
    rawCpu.push((await processCpuMs(process.pid)) - cpu0);
  };
  const runControl = () => {
    const s = performance.now();
    execFileSync('ffmpeg', args, { stdio: 'ignore' });
    raw2.push(performance.now() - s);
  };
  for (let i = 0; i < RUNS; i++) {
    if (i % 2 === 0) {
      await runTask();
      await runRaw();
      runControl();
    } else {
      runControl();
      await runRaw();
      await runTask();
    }
  }
  return {
    crf: crfFor('h264', options.quality),
    preset: options.preset,
    taskMs: median(task),
    ffmpegMs: median(raw),
    ratio: pairedRatio(task, raw),
    controlRatio: pairedRatio(raw2, raw),
    taskCpuMs: median(taskCpu),
    ffmpegCpuMs: median(rawCpu),
    cpuRatio: pairedRatio(taskCpu, rawCpu),
    phasesMs: phaseMeans(phasesBefore, await taskPhases(m, 'video')),
    target: 1.03,
    load: loadAvg(),
  };
}

async function benchPickup(m: Mediad) {
  const small = await upload(m, await fixture('image-png'), 'small.png');
  // Pickup: one task at a time, so a worker is always idle when it arrives.
  const pickup: number[] = [];
  const phasesBefore = await taskPhases(m, 'image');
  for (let i = 0; i < 200; i++) {
    const t = await waitDone(m, (await api(m, 'POST', '/tasks', { kind: 'image', file_id: small.id, width: 16 })).id);
    pickup.push(ms(t.created, t.started));
  }
  return {
    pickupP50Ms: pct(pickup, 50),
    pickupP99Ms: pct(pickup, 99),
    pickupTargetMs: 20,
    phasesMs: phaseMeans(phasesBefore, await taskPhases(m, 'image')),
  };
}

/**
 * The floor of a durable queue on PostgreSQL: the fsyncing raw loop with each resize claimed from a
 * table of pending rows (`FOR UPDATE SKIP LOCKED`) and marked done, each a committed statement, as a
 * queue that loses no task must; no API, events, counters, blob journal or second process. Per second.
 */
async function pgQueueLoop(src: string, concurrency: number, dbUrl: string): Promise<number> {
  const pool = new pg.Pool({ connectionString: dbUrl, max: concurrency });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-queue-'));
  try {
    await pool.query(
      'create table if not exists floor_tasks (id serial primary key, status text not null, width int not null, output text, updated timestamptz)',
    );
    await pool.query('create index if not exists floor_tasks_status on floor_tasks (status, id)');
    await pool.query('truncate floor_tasks');
    await pool.query(
      `insert into floor_tasks (status, width) select 'pending', 8 + (g % 32) from generate_series(0, $1 - 1) g`,
      [SMALL_TASKS],
    );
    const s = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (;;) {
          const { rows } = await pool.query<{ id: number; width: number }>(
            `update floor_tasks set status = 'processing', updated = now() where id = (select id from floor_tasks where status = 'pending' order by id limit 1 for update skip locked) returning id, width`,
          );
          const task = rows[0];
          if (!task) return;
          const out = path.join(dir, `${task.id}.png`);
          await smallResize(src, task.width, out, true);
          await pool.query(`update floor_tasks set status = 'completed', output = $2, updated = now() where id = $1`, [
            task.id,
            out,
          ]);
        }
      }),
    );
    return SMALL_TASKS / ((performance.now() - s) / 1000);
  } finally {
    await pool.end();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** SMALL_TASKS image tasks queued while the kind is paused, then resumed: tasks/s (bench/small-tasks.ts). */
async function smallBatch(m: Mediad, fileId: string): Promise<number> {
  const batch = await queueSmallBatch(m, fileId, SMALL_TASKS);
  await batch.run();
  return batch.perSecond();
}

/** Rounds alternating the raw sharp loop and a batch of tasks; the ratio is the median of the rounds' ratios. */
async function benchSmall(m: Mediad, concurrency: number, phasesOf: Mediad | null, queueDbUrl?: string) {
  const src = await fixture('image-png');
  const file = await upload(m, src, `small-${Date.now()}.png`);
  for (let i = 0; i < WARMUP_BATCHES; i++) await smallBatch(m, file.id);
  await rawSharpLoop(src, SMALL_TASKS, concurrency);
  const tasks: number[] = [];
  const raw: number[] = [];
  const raw2: number[] = [];
  const durable: number[] = [];
  const queue: number[] = [];
  const phasesBefore = phasesOf ? await taskPhases(phasesOf, 'image') : {};
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) {
      raw.push(await rawSharpLoop(src, SMALL_TASKS, concurrency));
      durable.push(await rawSharpLoop(src, SMALL_TASKS, concurrency, true));
      if (queueDbUrl) queue.push(await pgQueueLoop(src, concurrency, queueDbUrl));
      tasks.push(await smallBatch(m, file.id));
      raw2.push(await rawSharpLoop(src, SMALL_TASKS, concurrency));
    } else {
      raw2.push(await rawSharpLoop(src, SMALL_TASKS, concurrency));
      tasks.push(await smallBatch(m, file.id));
      if (queueDbUrl) queue.push(await pgQueueLoop(src, concurrency, queueDbUrl));
      durable.push(await rawSharpLoop(src, SMALL_TASKS, concurrency, true));
      raw.push(await rawSharpLoop(src, SMALL_TASKS, concurrency));
    }
  }
  return {
    concurrency,
    warmupTasks: WARMUP_BATCHES * SMALL_TASKS,
    tasksPerS: tasks.map(Math.round),
    rawSharpPerS: raw.map(Math.round),
    ratio: median(tasks.map((t, i) => t / raw[i]!)),
    controlRatio: median(raw2.map((t, i) => t / raw[i]!)),
    // The raw loop also fsyncing each output and its directory: what durability alone costs.
    rawSharpFsyncPerS: durable.map(Math.round),
    ratioToFsyncLoop: median(tasks.map((t, i) => t / durable[i]!)),
    ...(queueDbUrl
      ? {
          // The minimal durable queue on the same database: its own ratio to the raw loop, and the tasks' to it.
          queueFloorPerS: queue.map(Math.round),
          queueFloorRatio: median(queue.map((q, i) => q / raw[i]!)),
          ratioToQueueFloor: median(tasks.map((t, i) => t / queue[i]!)),
        }
      : {}),
    target: 0.5,
    ...(phasesOf ? { phasesMs: phaseMeans(phasesBefore, await taskPhases(phasesOf, 'image')) } : {}),
    load: loadAvg(),
  };
}

/** PostgreSQL, `mediad serve` without workers and two `mediad worker` processes (default concurrency each). */
async function benchPg() {
  const dbUrl = await freshPg('mediad_bench_tasks');
  const m = await startMediad({ MEDIAD_DATABASE_URL: dbUrl, MEDIAD_SERVE_WORKERS: 'false' });
  const perProcess = os.availableParallelism();
  const cli = await mediadCommand();
  const workers: ChildProcess[] = Array.from({ length: 2 }, () =>
    spawn(cli, ['worker'], {
      env: { ...process.env, MEDIAD_DATA_DIR: m.dataDir, MEDIAD_DATABASE_URL: dbUrl, MEDIAD_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    }),
  );
  try {
    for (let i = 0; (await api(m, 'GET', '/workers')).length < 2; i++) {
      if (i > 600) throw new Error('the worker processes did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    return await benchSmall(m, 2 * perProcess, null, dbUrl);
  } finally {
    for (const w of workers) w.kill('SIGTERM');
    m.child.kill('SIGTERM');
    await fs.rm(m.dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

const results: Record<string, unknown> = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.availableParallelism(),
  runs: RUNS,
  rounds: ROUNDS,
  loadBefore: loadAvg(),
};
const f = (n: number) => n.toFixed(1);
const m = await startMediad();
try {
  if (ONLY.has('image')) {
    const image = await benchImage(m);
    results.image = image;
    console.log(`\nimage 4000x3000 JPEG -> 800 px WebP (median of ${RUNS}; load ${image.load.join(' ')})`);
    console.log(
      `  mediad task ${f(image.taskMs)} ms | sharp ${f(image.sharpMs)} ms | vipsthumbnail ${f(image.vipsthumbnailMs)} ms | task/sharp ${image.ratio.toFixed(3)}x (target <= 1.05) ${image.ratio <= 1.05 ? 'PASS' : 'FAIL'} | A/A sharp/sharp ${image.controlRatio.toFixed(3)}x`,
    );
    console.log(
      `  CPU: task ${f(image.taskCpuMs)} ms (server, API calls included) | sharp ${f(image.sharpCpuMs)} ms | ${image.cpuRatio.toFixed(3)}x`,
    );
    console.log(`  phases (ms): ${JSON.stringify(image.phasesMs)}`);
  }
  if (ONLY.has('video')) {
    const video = await benchVideo(m);
    results.video = video;
    console.log(`video 10 s 1080p -> 720p H.264 CRF ${video.crf} ${video.preset} (load ${video.load.join(' ')})`);
    console.log(
      `  mediad task ${f(video.taskMs)} ms | raw ffmpeg ${f(video.ffmpegMs)} ms | ratio ${video.ratio.toFixed(3)}x (target <= 1.03) ${video.ratio <= 1.03 ? 'PASS' : 'FAIL'} | A/A ffmpeg/ffmpeg ${video.controlRatio.toFixed(3)}x`,
    );
    console.log(
      `  CPU: task ${f(video.taskCpuMs)} ms (server + ffmpeg) | raw ffmpeg ${f(video.ffmpegCpuMs)} ms | ${video.cpuRatio.toFixed(3)}x`,
    );
    console.log(`  phases (ms): ${JSON.stringify(video.phasesMs)}`);
  }
  if (ONLY.has('queue')) {
    const queue = await benchPickup(m);
    results.queue = queue;
    console.log('queue');
    console.log(
      `  pickup p50 ${queue.pickupP50Ms} ms, p99 ${queue.pickupP99Ms} ms (target p50 < 20 ms) ${queue.pickupP50Ms < 20 ? 'PASS' : 'FAIL'}`,
    );
    console.log(`  phases of a 64x48 -> 16 px task, one at a time (ms): ${JSON.stringify(queue.phasesMs)}`);
  }
  if (ONLY.has('small')) {
    const small = await benchSmall(m, os.availableParallelism(), m);
    results.small = small;
    console.log(
      `small image tasks, SQLite, mediad serve (concurrency ${small.concurrency}, after ${small.warmupTasks} warm-up tasks; load ${small.load.join(' ')})`,
    );
    console.log(
      `  tasks/s ${small.tasksPerS.join(' / ')} | raw sharp loop ${small.rawSharpPerS.join(' / ')} | ratio ${small.ratio.toFixed(3)} (target >= 0.5) ${small.ratio >= 0.5 ? 'PASS' : 'FAIL'} | A/A loop/loop ${small.controlRatio.toFixed(3)}`,
    );
    console.log(
      `  raw sharp loop with an fsync of each output and its directory ${small.rawSharpFsyncPerS.join(' / ')} | ratio ${small.ratioToFsyncLoop.toFixed(3)}`,
    );
    console.log(`  phases (ms): ${JSON.stringify(small.phasesMs)}`);
  }
} finally {
  m.child.kill('SIGTERM');
  await fs.rm(m.dataDir, { recursive: true, force: true }).catch(() => undefined);
}
if (ONLY.has('pg')) {
  const pgSmall = await benchPg();
  results.pg = pgSmall;
  console.log(
    `small image tasks, PostgreSQL, 2 mediad worker processes (concurrency ${pgSmall.concurrency} in all, after ${pgSmall.warmupTasks} warm-up tasks; load ${pgSmall.load.join(' ')})`,
  );
  console.log(
    `  tasks/s ${pgSmall.tasksPerS.join(' / ')} | raw sharp loop ${pgSmall.rawSharpPerS.join(' / ')} | ratio ${pgSmall.ratio.toFixed(3)} (target >= 0.5) ${pgSmall.ratio >= 0.5 ? 'PASS' : 'FAIL'} | A/A loop/loop ${pgSmall.controlRatio.toFixed(3)}`,
  );
  console.log(
    `  raw sharp loop with an fsync of each output and its directory ${pgSmall.rawSharpFsyncPerS.join(' / ')} | ratio ${pgSmall.ratioToFsyncLoop.toFixed(3)}`,
  );
  console.log(
    `  the floor of a durable queue on PostgreSQL (that loop, each resize claimed and marked done) ${pgSmall.queueFloorPerS?.join(' / ')} | its ratio to the raw loop ${pgSmall.queueFloorRatio?.toFixed(3)} | tasks' ratio to it ${pgSmall.ratioToQueueFloor?.toFixed(3)}`,
  );
}
await fs.mkdir('bench/results', { recursive: true });
await fs.writeFile('bench/results/tasks.json', `${JSON.stringify(results, null, 2)}\n`);
