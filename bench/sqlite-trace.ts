// Diagnostic for issue 26's small tasks on SQLite, the sibling of bench/pg-trace.ts: batches of N small
// image tasks in `mediad serve` (its default: SQLite, in-process workers), each followed by the raw sharp
// loop making the same resizes at the same concurrency in this process. Per batch: the rate, the
// machine's idle share (/proc/stat), and per task the CPU of each kind of thread (/proc/<pid>/task) and
// the context switches, for the server during the tasks and for this process during the raw loop.
// Threads as bench/lib.ts's threadCpuMs groups them: the main thread, Node's others (libuv's pool, where
// sharp's calls and the fsyncs run, and V8's helpers), libvips' workers.
// PERF=main (the main thread) or PERF=all records `perf record -g` of the server during each batch into
// /tmp/sqlite-trace-<round>.data; NODE_OPTIONS=--perf-basic-prof in SERVER_ENV names the JS frames.
// Run: N=400 ROUNDS=3 node --import tsx bench/sqlite-trace.ts   (SERVER_ENV='{"NAME":"value"}': the server's env)
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import { startMediad, upload } from './child.js';
import { threadCpuMs } from './lib.js';
import { fixture } from '../test/helpers/fixtures.js';
import { queueSmallBatch, rawSharpLoop } from './small-tasks.js';

const N = Number(process.env.N ?? 400);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const PERF = process.env.PERF;
const CONCURRENCY = os.availableParallelism(); // mediad serve's default worker concurrency

/** The machine's CPU ticks: idle (with iowait) and in all. */
async function machineTicks(): Promise<{ idle: number; iowait: number; total: number }> {
  const f = (await fs.readFile('/proc/stat', 'utf8')).split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { idle: f[3]! + f[4]!, iowait: f[4]!, total: f.reduce((a, b) => a + b, 0) };
}

/** Context switches of a process's threads so far, voluntary and not. */
async function contextSwitches(pid: number): Promise<{ voluntary: number; involuntary: number }> {
  const out = { voluntary: 0, involuntary: 0 };
  for (const tid of await fs.readdir(`/proc/${pid}/task`).catch(() => [])) {
    const status = await fs.readFile(`/proc/${pid}/task/${tid}/status`, 'utf8').catch(() => '');
    out.voluntary += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    out.involuntary += Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  }
  return out;
}

/** Runs `work` (N resizes or tasks) and prints what it cost `pid`'s threads per item, and the machine's idle share. */
async function measure(label: string, pid: number, work: () => Promise<void>): Promise<void> {
  const [m0, t0, c0] = [await machineTicks(), await threadCpuMs(pid), await contextSwitches(pid)];
  const s = performance.now();
  await work();
  const wall = performance.now() - s;
  const [m1, t1, c1] = [await machineTicks(), await threadCpuMs(pid), await contextSwitches(pid)];
  const total = m1.total - m0.total;
  const each = (k: 'main' | 'other' | 'vips') => (t1[k] - t0[k]) / N;
  console.log(
    `${label} ${(N / (wall / 1000)).toFixed(1)}/s | machine idle ${((100 * (m1.idle - m0.idle)) / total).toFixed(0)}% (iowait ${((100 * (m1.iowait - m0.iowait)) / total).toFixed(0)}%) | CPU ms each ${(each('main') + each('other') + each('vips')).toFixed(2)}: main thread ${each('main').toFixed(2)}, Node's other threads ${each('other').toFixed(2)}, libvips' ${each('vips').toFixed(2)} | context switches each ${((c1.voluntary - c0.voluntary) / N).toFixed(1)} voluntary, ${((c1.involuntary - c0.involuntary) / N).toFixed(1)} involuntary`,
  );
}

const m = await startMediad(
  process.env.SERVER_ENV ? (JSON.parse(process.env.SERVER_ENV) as Record<string, string>) : {},
);
const server = m.child.pid!;
try {
  const src = await fixture('image-png');
  const file = await upload(m, src, 'small.png');
  console.log(`concurrency ${CONCURRENCY}, ${N} tasks and resizes a round`);
  for (let r = 0; r < ROUNDS; r++) {
    const batch = await queueSmallBatch(m, file.id, N);
    await new Promise((res) => setTimeout(res, 1000)); // the queueing's events and log flushes settle
    const perf = PERF
      ? spawn(
          'perf',
          [
            'record',
            '-F',
            '2999',
            '-g',
            PERF === 'main' ? '-t' : '-p',
            String(server),
            '-o',
            `/tmp/sqlite-trace-${r}.data`,
          ],
          { stdio: 'ignore' },
        )
      : null;
    if (perf) await new Promise((res) => setTimeout(res, 300)); // perf attached
    await measure('mediad tasks ', server, () => batch.run());
    if (perf) {
      perf.kill('SIGINT');
      await new Promise((res) => perf.once('exit', res));
    }
    console.log(`  tasks/s by their own timestamps ${(await batch.perSecond()).toFixed(1)}`);
    await measure('raw sharp loop', process.pid, async () => {
      await rawSharpLoop(src, N, CONCURRENCY);
    });
  }
} finally {
  m.child.kill('SIGTERM');
  await fs.rm(m.dataDir, { recursive: true, force: true }).catch(() => undefined);
}
