// What the small-task benchmarks share (bench/tasks.ts, bench/pg-trace.ts, bench/sqlite-trace.ts): the
// tasks' resizes, the raw sharp loop that makes the same ones, and a batch queued while the kind is
// paused, so that the API's pace of creating tasks is not what is measured.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { api, listMeta, type Mediad } from './child.js';

/** The width of the i-th small task and resize (a 64×48 PNG → 8..39 px). */
const smallWidth = (i: number) => 8 + (i % 32);

async function fsync(p: string): Promise<void> {
  const fh = await fs.open(p, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** One small task's resize, as the raw loops make it; `durable`: the output and its directory fsynced after. */
export async function smallResize(src: string, width: number, out: string, durable: boolean): Promise<void> {
  await sharp(src).rotate().resize({ width }).png().toFile(out);
  if (durable) for (const p of [out, path.dirname(out)]) await fsync(p);
}

/**
 * The same resizes as `n` small tasks, `concurrency` at a time, from the same file to a file: per second.
 * `durable`: each output is also fsynced with its directory, as the blob store does before a task's row commits.
 */
export async function rawSharpLoop(src: string, n: number, concurrency: number, durable = false): Promise<number> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-raw-'));
  let next = 0;
  const s = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let i = next++; i < n; i = next++) {
        await smallResize(src, smallWidth(i), path.join(dir, `${w}-${i}.png`), durable);
      }
    }),
  );
  const perS = n / ((performance.now() - s) / 1000);
  await fs.rm(dir, { recursive: true, force: true });
  return perS;
}

/** A batch of `n` small image tasks, queued with the kind paused; `run` resumes it. */
export interface SmallBatch {
  /** Resumes the kind, then waits (one poll of a count every 50 ms) until the batch has completed. */
  run(): Promise<void>;
  /** Tasks a second from the first started to the last finished (the tasks' own timestamps). */
  perSecond(): Promise<number>;
}

export async function queueSmallBatch(m: Mediad, fileId: string, n: number): Promise<SmallBatch> {
  await api(m, 'POST', '/queue/kinds/image/pause');
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push((await api(m, 'POST', '/tasks', { kind: 'image', file_id: fileId, width: smallWidth(i) })).id);
  const completed = async () => (await listMeta(m, '/tasks?status=completed&kind=image&limit=1')).total as number;
  const before = await completed();
  return {
    async run() {
      await api(m, 'POST', '/queue/kinds/image/resume');
      // One poll of a count, not n pollers: the API shares the machine with the workers.
      while ((await completed()) < before + n) await new Promise((r) => setTimeout(r, 50));
    },
    async perSecond() {
      let first = Infinity;
      let last = 0;
      for (const id of ids) {
        const t = await api(m, 'GET', `/tasks/${id}`);
        first = Math.min(first, Date.parse(t.started));
        last = Math.max(last, Date.parse(t.finished));
      }
      return n / ((last - first) / 1000);
    },
  };
}
