// Scene cuts with FFmpeg's scdet filter: it logs `lavfi.scd.score: S, lavfi.scd.time: T` at
// info level for each frame whose difference from the previous one passes the threshold.
import { failureLine, ProgressParser } from './ffmpeg-run.js';
import { ffmpegPreamble, oneStreamOf } from './ffmpeg-preamble.js';
import { mediaBinaries, ProcessError, runProcess } from './process-runner.js';
import { MediaTransformError } from './transform-error.js';

export interface SceneCut {
  /** Seconds from the start of the video. */
  time: number;
  /** scdet's score (0–100): how different the frame is from the one before. */
  score: number;
}

export interface SceneDetectOptions {
  /** scdet threshold (0–100, default 10): lower finds softer cuts and more false ones. */
  threshold?: number;
  /** Frames are scaled down to this width first (default 320): cuts survive, decoding work does not. */
  analysisWidth?: number;
  timeoutMs: number;
  signal?: AbortSignal;
  durationSeconds?: number;
  onProgress?: (percent: number) => void;
}

export function sceneDetectArgs(
  inputPath: string,
  opts: Pick<SceneDetectOptions, 'threshold' | 'analysisWidth'>,
): string[] {
  const threshold = Math.min(100, Math.max(0, opts.threshold ?? 10));
  const width = Math.max(16, Math.floor(opts.analysisWidth ?? 320));
  return [
    ...ffmpegPreamble({ progress: true, overwrite: false, loglevel: 'info' }),
    ...oneStreamOf(inputPath, 'video'),
    '-vf',
    `scale=w='min(iw,${width})':h=-2:flags=fast_bilinear,scdet=threshold=${threshold}:sc_pass=0`,
    '-f',
    'null',
    '-',
  ];
}

const SCDET_LINE = /lavfi\.scd\.score:\s*([\d.]+),\s*lavfi\.scd\.time:\s*([\d.]+)/;

export function parseScdetLine(line: string): SceneCut | null {
  const m = SCDET_LINE.exec(line);
  if (!m) return null;
  const score = Number(m[1]);
  const time = Number(m[2]);
  return Number.isFinite(score) && Number.isFinite(time) ? { time, score } : null;
}

/** Scene cuts of the first video stream, in time order. */
export async function detectSceneCuts(inputPath: string, opts: SceneDetectOptions): Promise<SceneCut[]> {
  const cuts: SceneCut[] = [];
  const onProgress = opts.onProgress;
  const parser = onProgress
    ? new ProgressParser(opts.durationSeconds, (p) => {
        try {
          onProgress(p);
        } catch {
          // progress is best-effort
        }
      })
    : undefined;
  try {
    await runProcess(mediaBinaries().ffmpeg, sceneDetectArgs(inputPath, opts), {
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      onStdoutLine: (line) => parser?.line(line),
      onStderrLine: (line) => {
        const cut = parseScdetLine(line);
        if (cut) cuts.push(cut);
      },
    });
  } catch (err) {
    // As in runFfmpeg: a non-zero exit is about the file; timeouts, aborts and spawn failures are ours.
    if (err instanceof ProcessError && err.reason === 'exit') {
      throw new MediaTransformError('transform_failed', `scene detection failed: ${failureLine(err.stderrTail)}`, {
        cause: err,
      });
    }
    throw err;
  }
  parser?.finish();
  return cuts.sort((a, b) => a.time - b.time);
}
