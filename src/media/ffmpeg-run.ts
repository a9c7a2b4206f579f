// The one wrapper that runs a transform's ffmpeg argv: progress from `-progress pipe:1`, and
// failures turned into MediaTransformError unless they are ours (timeout, abort, no binary).
import { mediaBinaries, ProcessError, runProcess } from './process-runner.js';
import { MediaTransformError } from './transform-error.js';

export interface FfmpegRunOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Length of the output in seconds; without it only the final 100 is reported. */
  expectedDurationSeconds?: number;
  /** Integer percent, strictly increasing; 100 once the output is complete. */
  onProgress?: (percent: number) => void;
}

/** At most ~4 updates a second: each one may end up as a database write and an event. */
export const PROGRESS_INTERVAL_MS = 250;

/** Incremental parser for ffmpeg's `-progress` key=value lines. */
export class ProgressParser {
  private last = -1;
  private lastAt = -Infinity;

  constructor(
    private readonly expectedSeconds: number | undefined,
    private readonly onProgress: (percent: number) => void,
    private readonly now: () => number = Date.now,
    private readonly intervalMs = PROGRESS_INTERVAL_MS,
  ) {}

  line(line: string): void {
    const eq = line.indexOf('=');
    if (eq < 0) return;
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim();
    // ffmpeg prints progress=end after writing the trailer: the output is complete.
    if (key === 'progress' && value === 'end') return this.finish();
    // out_time_ms is in microseconds too (a long-standing ffmpeg quirk).
    if (key !== 'out_time_us' && key !== 'out_time_ms') return;
    const us = Number(value);
    const expected = this.expectedSeconds;
    if (!Number.isFinite(us) || us < 0 || !expected || expected <= 0) return;
    // 100 is kept for the end: the last frames and the trailer are still to be written.
    const percent = Math.min(99, Math.floor((us / 1e6 / expected) * 100));
    const t = this.now();
    if (percent <= this.last || t - this.lastAt < this.intervalMs) return;
    this.emit(percent, t);
  }

  finish(): void {
    if (this.last < 100) this.emit(100, this.now());
  }

  private emit(percent: number, at: number): void {
    this.last = percent;
    this.lastAt = at;
    this.onProgress(percent);
  }
}

/** Last stderr line without absolute paths (they name our temp dirs, not the caller's files). */
export function failureLine(stderrTail: string): string {
  const last =
    stderrTail
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .pop() ?? '';
  // A trailing ':' is ffmpeg's separator ("file:/x/in.mp4: Invalid data"), not part of the path.
  return last.replace(/(^|[\s'"([])(?:file:)?\/[^\s'")\]]*[^\s'")\]:]/g, '$1<file>');
}

export async function runFfmpeg(args: readonly string[], opts: FfmpegRunOptions): Promise<{ stderr: string }> {
  const onProgress = opts.onProgress;
  // Progress is best-effort: a throwing callback must not take the encode (or the process) down.
  const report = (p: number): void => {
    try {
      onProgress?.(p);
    } catch {
      // ignored on purpose
    }
  };
  const parser = onProgress ? new ProgressParser(opts.expectedDurationSeconds, report) : undefined;
  try {
    const res = await runProcess(mediaBinaries().ffmpeg, args, {
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      // Streaming stdout also means `-progress` output never counts against an output limit.
      onStdoutLine: (line) => parser?.line(line),
    });
    parser?.finish();
    return { stderr: res.stderr };
  } catch (err) {
    // Timeouts, aborts and a missing binary are about mediad, not about the caller's file.
    if (
      !(err instanceof ProcessError) ||
      err.reason === 'timeout' ||
      err.reason === 'aborted' ||
      err.reason === 'spawn'
    ) {
      throw err;
    }
    const line = failureLine(err.stderrTail);
    throw new MediaTransformError('transform_failed', line ? `ffmpeg failed: ${line}` : 'ffmpeg failed', {
      cause: err,
    });
  }
}
