// Facts about installed tools for status checks (`mediad doctor`): whether a binary starts, which
// version it reports, which Debian package version is installed. Never throws.
import { mediaBinaries, ProcessError, runProcess } from './process-runner.js';

export interface ToolRun {
  /** False only when the binary could not be started (not on PATH, not executable). */
  found: boolean;
  /** stdout and the stderr tail, whatever the exit code (usage texts often exit non-zero). */
  output: string;
}

/** Runs a tool briefly to see whether it exists and what it prints. */
export async function runTool(binary: string, args: string[]): Promise<ToolRun> {
  try {
    const res = await runProcess(binary, args, { timeoutMs: 10_000, maxOutputBytes: 4 * 1024 * 1024 });
    return { found: true, output: `${res.stdout.toString('utf8')}\n${res.stderr}` };
  } catch (err) {
    if (err instanceof ProcessError && err.reason !== 'spawn') return { found: true, output: err.stderrTail };
    return { found: false, output: '' };
  }
}

/** First match of `pattern` in a tool's stdout+stderr (e.g. `tesseract --version`), or null. */
export async function toolVersion(binary: string, args: string[], pattern: RegExp): Promise<string | null> {
  const run = await runTool(binary, args);
  return run.found ? (pattern.exec(run.output)?.[1] ?? null) : null;
}

/** The installed version of a Debian package (dpkg-query), or null off Debian or when absent. */
export async function debianPackageVersion(pkg: string): Promise<string | null> {
  try {
    const res = await runProcess('dpkg-query', ['-W', '-f', '${Status}\t${Version}', pkg], { timeoutMs: 10_000 });
    const [status, version] = res.stdout.toString('utf8').split('\t');
    return status?.includes('installed') && version ? version : null;
  } catch {
    return null;
  }
}

/** Whether the configured ffmpeg has a filter (e.g. scdet, drawtext). */
export async function ffmpegHasFilter(name: string): Promise<boolean> {
  try {
    const res = await runProcess(mediaBinaries().ffmpeg, ['-hide_banner', '-filters'], {
      timeoutMs: 10_000,
      maxOutputBytes: 4 * 1024 * 1024,
    });
    return new RegExp(`^\\s*\\S+\\s+${name}\\s`, 'm').test(res.stdout.toString('utf8'));
  } catch {
    return false;
  }
}

/** Whether the configured ffmpeg has an encoder (e.g. libx265, libsvtav1). */
export async function ffmpegHasEncoder(name: string): Promise<boolean> {
  try {
    const res = await runProcess(mediaBinaries().ffmpeg, ['-hide_banner', '-encoders'], {
      timeoutMs: 10_000,
      maxOutputBytes: 4 * 1024 * 1024,
    });
    return new RegExp(`^\\s*\\S+\\s+${name}\\s`, 'm').test(res.stdout.toString('utf8'));
  } catch {
    return false;
  }
}
