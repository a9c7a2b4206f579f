// The one place that spawns external media tools (ffmpeg, ffprobe). Every child runs in its own
// process group so a timeout or abort can kill it together with anything it started.
import { spawn } from 'node:child_process';
import { lowerChildPriority } from './processing-priority.js';

export interface MediaBinaries {
  ffmpeg: string;
  ffprobe: string;
}

const binaries: MediaBinaries = { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' };

/** Called by the service's config at start-up; unset fields keep their current value. */
export function setMediaBinaries(paths: Partial<MediaBinaries>): void {
  if (paths.ffmpeg) binaries.ffmpeg = paths.ffmpeg;
  if (paths.ffprobe) binaries.ffprobe = paths.ffprobe;
}

export function mediaBinaries(): Readonly<MediaBinaries> {
  return { ...binaries };
}

export interface RunOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Called for every complete stderr line (e.g. ffmpeg `-progress` parsing). */
  onStderrLine?: (line: string) => void;
  /**
   * Called for every complete stdout line (ffmpeg `-progress pipe:1`). Streamed stdout is not
   * kept: `RunResult.stdout` is then empty and `maxOutputBytes` does not apply.
   */
  onStdoutLine?: (line: string) => void;
  /** Stdout beyond this kills the process and fails the run. Default 16 MiB. */
  maxOutputBytes?: number;
}

export interface RunResult {
  stdout: Buffer;
  /** The last STDERR_TAIL_LINES lines of stderr (kept bounded on purpose). */
  stderr: string;
  code: number;
}

export type ProcessFailure = 'exit' | 'timeout' | 'aborted' | 'output_limit' | 'spawn';

/** Failure of a child process; `message` is for logs, not for API callers. */
export class ProcessError extends Error {
  constructor(
    message: string,
    readonly reason: ProcessFailure,
    readonly stderrTail: string,
    readonly exitCode: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ProcessError';
  }
}

const STDERR_TAIL_LINES = 20;
const MAX_STDERR_LINE = 4096; // ffmpeg can print very long lines; keep memory bounded

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is already gone
  }
}

export function runProcess(cmd: string, args: readonly string[], opts: RunOptions): Promise<RunResult> {
  const maxOutput = opts.maxOutputBytes ?? 16 * 1024 * 1024;
  const name = cmd.split('/').pop() ?? cmd;
  return new Promise<RunResult>((resolve, reject) => {
    if (opts.signal?.aborted) {
      reject(new ProcessError(`${name} aborted before start`, 'aborted', '', null, { cause: opts.signal.reason }));
      return;
    }
    const child = spawn(cmd, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    lowerChildPriority(child.pid);
    const chunks: Buffer[] = [];
    let outBytes = 0;
    const tail: string[] = [];
    let partial = '';
    let failure: ProcessError | undefined;
    let settled = false;

    const stderrTail = (): string => [...tail, partial].filter(Boolean).join('\n');
    const pushLine = (line: string): void => {
      const clipped = line.length > MAX_STDERR_LINE ? line.slice(0, MAX_STDERR_LINE) + '…' : line;
      tail.push(clipped);
      if (tail.length > STDERR_TAIL_LINES) tail.shift();
      opts.onStderrLine?.(clipped);
    };
    // Records the first reason to stop and kills the whole group; 'close' then settles.
    const fail = (reason: ProcessFailure, message: string, cause?: unknown): void => {
      failure ??= new ProcessError(message, reason, '', null, { cause });
      killGroup(child.pid);
    };

    const timer = setTimeout(() => fail('timeout', `${name} timed out after ${opts.timeoutMs} ms`), opts.timeoutMs);
    const onAbort = (): void => fail('aborted', `${name} aborted`, opts.signal?.reason);
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    let outPartial = '';
    const onStdoutLine = opts.onStdoutLine;
    if (onStdoutLine) {
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (text: string) => {
        const lines = (outPartial + text).split(/\r?\n|\r/);
        outPartial = lines.pop() ?? '';
        if (outPartial.length > MAX_STDERR_LINE) outPartial = outPartial.slice(-MAX_STDERR_LINE);
        for (const line of lines) if (line) onStdoutLine(line);
      });
    } else {
      child.stdout.on('data', (chunk: Buffer) => {
        outBytes += chunk.length;
        if (outBytes > maxOutput) fail('output_limit', `${name} wrote more than ${maxOutput} bytes to stdout`);
        else chunks.push(chunk);
      });
    }
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => {
      const lines = (partial + text).split(/\r?\n|\r/);
      partial = lines.pop() ?? '';
      if (partial.length > MAX_STDERR_LINE) partial = partial.slice(-MAX_STDERR_LINE);
      for (const line of lines) if (line) pushLine(line);
    });

    const finish = (err: ProcessError | undefined, code: number | null, sig: string | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (partial) pushLine(partial);
      partial = '';
      if (outPartial) onStdoutLine?.(outPartial);
      outPartial = '';
      if (err) {
        reject(new ProcessError(err.message, err.reason, stderrTail(), code, { cause: err.cause }));
      } else if (code !== 0) {
        const detail = stderrTail();
        const how = code === null ? `was killed by ${sig ?? 'a signal'}` : `exited with code ${code}`;
        reject(new ProcessError(`${name} ${how}${detail ? `: ${detail}` : ''}`, 'exit', detail, code));
      } else {
        resolve({ stdout: Buffer.concat(chunks), stderr: stderrTail(), code });
      }
    };

    child.on('error', (err) => {
      // Spawn failure (e.g. ENOENT): no 'close' may follow, settle here.
      killGroup(child.pid);
      finish(
        new ProcessError(`${name} could not be started: ${err.message}`, 'spawn', '', null, { cause: err }),
        null,
        null,
      );
    });
    // The leader has exited: kill stragglers it left in its group, otherwise they would keep
    // our pipes open and 'close' would wait for them.
    child.on('exit', () => killGroup(child.pid));
    child.on('close', (code, sig) => finish(failure, code, sig));
  });
}
