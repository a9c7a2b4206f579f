// Media work runs at a lower CPU priority than the API: on a small machine a burst of image-URL
// misses or a transcode would otherwise take every core from the thread that answers requests
// (bench:image-urls measures the API's p99 under misses). The nice value is a per-thread attribute
// on Linux (setpriority(PRIO_PROCESS, tid) changes one thread; threads a thread starts inherit
// it), so FFmpeg children are reniced whole and, in this process, only libvips' worker threads,
// which name themselves "libvips worker". Lowering a priority needs no privilege; raising it back
// would, so a value once set is kept. Elsewhere than Linux the threads keep their priority.
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

let nice = 0;

/** Called by the runtime at start-up (MEDIAD_PROCESSING_NICE); 0 leaves every priority alone. */
export function setProcessingNice(value: number): void {
  nice = value;
}

/** Lowers a child process's priority (and so its threads'); called as soon as it is spawned. */
export function lowerChildPriority(pid: number | undefined): void {
  if (nice === 0 || pid === undefined) return;
  try {
    os.setPriority(pid, nice);
  } catch {
    // ESRCH: it has already ended; EACCES: a stricter policy than ours applies. Nothing to undo.
  }
}

const TASKS = '/proc/self/task';
/** Threads settled: reniced, or seen in two scans (a second apart) under another name. */
const settled = new Set<string>();
/** Threads seen once under another name: a thread names itself just after it starts, so one look is not enough. */
const once = new Set<string>();
let lastScan = 0;
/** libvips starts workers as work needs them: a new one runs at the normal priority until the next scan, at most this long after its first image. */
const SCAN_EVERY_MS = 1000;

/** Renices libvips' worker threads that appeared since the last look (cheap: one directory read, at most once a second). */
export function lowerLibvipsPriority(): void {
  if (nice === 0 || process.platform !== 'linux') return;
  const now = Date.now();
  if (now - lastScan < SCAN_EVERY_MS) return;
  lastScan = now;
  let tids: string[];
  try {
    tids = readdirSync(TASKS);
  } catch {
    return;
  }
  // Ended threads' ids: forgotten once they outnumber the living (a thread then looked at again costs a read).
  if (settled.size + once.size > 4 * tids.length) {
    settled.clear();
    once.clear();
  }
  for (const tid of tids) {
    if (settled.has(tid)) continue;
    try {
      if (readFileSync(`${TASKS}/${tid}/comm`, 'latin1').startsWith('libvips')) {
        os.setPriority(Number(tid), nice);
        settled.add(tid);
      } else if (once.has(tid)) {
        once.delete(tid);
        settled.add(tid);
      } else once.add(tid);
    } catch {
      // The thread ended between the listing and now.
      once.delete(tid);
    }
  }
}
