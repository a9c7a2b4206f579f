// Adaptive streaming benchmark (issue 23), beside its competitor in the same run:
//   the adaptive_video task (created -> finished, the task's own timestamps) vs raw ffmpeg running
//   the identical ladder command (buildAdaptiveArgs: the very argv the task runs), on a generated
//   1080p source (default 60 s; BENCH_ADAPTIVE_SECONDS), paired runs alternating which goes first;
//   then each rung's SSIM against the source (libvmaf is absent from Debian's FFmpeg 5.1).
//   Time to first playable: the task's created -> playable_at (its package plays from then on,
//   docs/tasks.md) against its full time (target <= 30 %), and the same moment of the raw run
//   (every rendition's playlist lists a segment), watched in its output directory.
// Run: npm run bench:adaptive   (mediad runs as a child process on loopback; results in bench/results/adaptive.json)
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { api, median, ms, startMediad, upload, waitDone } from './child.js';
import { buildAdaptiveArgs, masterVariants, probeFile, resolveLadder } from '../src/media/index.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 1);

/**
 * CPU time (ms) of a process itself and of its children it has waited for, from /proc/<pid>/stat:
 * the wall time of an encode on a shared 2-core machine swings with the neighbours' load, its CPU
 * time hardly does, so both ratios are reported.
 */
async function cpuOf(pid: number | 'self'): Promise<{ own: number; children: number }> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  const f = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  // utime, stime, cutime, cstime: fields 14–17 of the whole line, in clock ticks of 10 ms
  return { own: (f[11]! + f[12]!) * 10, children: (f[13]! + f[14]!) * 10 };
}
const SECONDS = Number(process.env.BENCH_ADAPTIVE_SECONDS ?? 60);
const SEGMENT = 4;

const work = await fs.mkdtemp(path.join(os.tmpdir(), 'mediad-bench-adaptive-'));
const src = path.join(work, 'source.mp4');
// A moving test pattern with a tone: 1080p30 H.264 at high quality (the source's own losses stay small).
execFileSync('ffmpeg', [
  ...['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=1920x1080:rate=30:duration=${SECONDS}`],
  ...['-f', 'lavfi', '-i', `sine=frequency=440:duration=${SECONDS}`],
  ...['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '16', '-c:a', 'aac', '-shortest', src],
]);
const probe = await probeFile(src, { maxPixels: 1e9, maxDurationSeconds: 1e6 });
const ladder = resolveLadder(undefined, probe.height ?? 1080, 'h264');
const rawDir = path.join(work, 'raw');
// The task caps its output at MEDIAD_MAX_DURATION_SECONDS (default 14400): the same -t here.
const args = buildAdaptiveArgs(src, rawDir, { ladder, codec: 'h264', segmentSeconds: SEGMENT }, probe, {
  maxDurationSeconds: 14400,
});

const m = await startMediad();
try {
  const input = await upload(m, src, 'source.mp4');
  const task: number[] = [];
  const raw: number[] = [];
  const playable: number[] = [];
  const rawPlayable: number[] = [];
  const taskCpu: number[] = [];
  const rawCpu: number[] = [];
  const server = m.child.pid!;
  const runTask = async () => {
    const before = await cpuOf(server);
    const created = await api(m, 'POST', '/tasks', {
      kind: 'adaptive_video',
      file_id: input.id,
      segment_seconds: SEGMENT,
    });
    const t = await waitDone(m, created.id, 500);
    task.push(ms(t.created, t.finished));
    playable.push(t.playable_at ? ms(t.created, t.playable_at) : NaN);
    // FFmpeg (a child the server waited for) and the server's own work for the task.
    const after = await cpuOf(server);
    taskCpu.push(after.own - before.own + after.children - before.children);
  };
  const runRaw = async () => {
    await fs.rm(rawDir, { recursive: true, force: true });
    await fs.mkdir(rawDir);
    const before = await cpuOf('self');
    const s = performance.now();
    // The raw run's first playable moment: every media playlist lists a segment (polled as the task's writer does).
    let first = NaN;
    const watch = setInterval(() => {
      if (!Number.isNaN(first)) return;
      const lists = ladder.map((_, i) => path.join(rawDir, `media_${i}.m3u8`));
      if (lists.every((l) => existsSync(l) && readFileSync(l, 'utf8').includes('#EXTINF')))
        first = performance.now() - s;
    }, 100);
    await new Promise<void>((resolve, reject) =>
      execFile('ffmpeg', args, (err) => (err ? reject(err) : resolve())),
    ).finally(() => clearInterval(watch));
    raw.push(performance.now() - s);
    rawPlayable.push(first);
    rawCpu.push((await cpuOf('self')).children - before.children);
  };
  for (let i = 0; i < RUNS; i++) {
    if (i % 2 === 0) {
      await runTask();
      await runRaw();
    } else {
      await runRaw();
      await runTask();
    }
  }
  const ratio = median(task.map((t, i) => t / raw[i]!));
  const cpuRatio = median(taskCpu.map((t, i) => t / rawCpu[i]!));

  // Quality per rung: each rung upscaled back to the source size and compared with it.
  const master = await fs.readFile(path.join(rawDir, 'master.m3u8'), 'utf8');
  const rungs = [];
  for (const v of masterVariants(master)) {
    const res = spawnSync(
      'ffmpeg',
      [
        ...['-hide_banner', '-nostats', '-allowed_extensions', 'ALL', '-i', path.join(rawDir, v.uri), '-i', src],
        ...['-lavfi', `[0:v]scale=${probe.width}:${probe.height}:flags=bicubic[d];[d][1:v]ssim`, '-f', 'null', '-'],
      ],
      { encoding: 'utf8' },
    );
    const ssim = Number(/All:([0-9.]+)/.exec(res.stderr)?.[1] ?? NaN);
    rungs.push({ height: v.height, bandwidth: v.bandwidth, ssim });
  }

  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.availableParallelism(),
    runs: RUNS,
    source: { seconds: SECONDS, width: probe.width, height: probe.height, fps: probe.fps },
    segmentSeconds: SEGMENT,
    taskMs: median(task),
    ffmpegMs: median(raw),
    ratio,
    cpu: { taskMs: median(taskCpu), ffmpegMs: median(rawCpu), ratio: cpuRatio },
    pairs: task.map((t, i) => ({
      taskMs: t,
      ffmpegMs: Math.round(raw[i]!),
      ratio: t / raw[i]!,
      taskCpuMs: taskCpu[i],
      ffmpegCpuMs: rawCpu[i],
      cpuRatio: taskCpu[i]! / rawCpu[i]!,
    })),
    target: 1.05,
    timeToFirstPlayable: {
      taskMs: median(playable),
      share: median(playable.map((p, i) => p / task[i]!)),
      rawMs: median(rawPlayable),
      target: 0.3,
    },
    rungs,
  };
  await fs.mkdir('bench/results', { recursive: true });
  await fs.writeFile('bench/results/adaptive.json', `${JSON.stringify(results, null, 2)}\n`);
  const f = (n: number) => (n / 1000).toFixed(1);
  console.log(
    `\nadaptive_video: ${SECONDS} s 1080p30 -> ${ladder.map((r) => `${r.height}p`).join('/')} H.264 + AAC, ${SEGMENT} s CMAF segments, HLS + DASH (median of ${RUNS})`,
  );
  console.log(
    `  mediad task ${f(results.taskMs)} s | raw ffmpeg (same argv) ${f(results.ffmpegMs)} s | ratio ${ratio.toFixed(3)}x (target <= 1.05) ${ratio <= 1.05 ? 'PASS' : 'FAIL'}`,
  );
  console.log(
    `  CPU time: task ${f(results.cpu.taskMs)} s (FFmpeg + the server) | raw ffmpeg ${f(results.cpu.ffmpegMs)} s | ratio ${cpuRatio.toFixed(3)}x`,
  );
  const ttfp = results.timeToFirstPlayable;
  console.log(
    `  first playable: task ${f(ttfp.taskMs)} s after creation = ${(ttfp.share * 100).toFixed(1)} % of its full time (target <= 30 %) ${ttfp.share <= 0.3 ? 'PASS' : 'FAIL'} | raw ffmpeg's first segments in every playlist ${f(ttfp.rawMs)} s`,
  );
  for (const r of rungs)
    console.log(
      `  ${r.height}p  BANDWIDTH ${Math.round(r.bandwidth / 1000)} kbit/s  SSIM ${r.ssim.toFixed(4)} vs source`,
    );
} finally {
  m.child.kill('SIGTERM');
  await fs.rm(m.dataDir, { recursive: true, force: true }).catch(() => undefined);
  await fs.rm(work, { recursive: true, force: true }).catch(() => undefined);
}
