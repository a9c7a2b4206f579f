import path from 'node:path';
import {
  checkOutputCap,
  expectedDuration,
  probeFile,
  readMp4Facts,
  runFfmpeg,
  type DurationLimit,
  type ProbeResult,
  type TrimOptions,
} from '../media/index.js';
import type { KindContext, KindInput } from './define.js';

/** Extensions of the ISO base media file format that FFmpeg writes (video and audio kinds). */
const ISO_BMFF: ReadonlySet<string> = new Set(['mp4', 'mov', 'm4a']);

/** An argv builder of src/media: input, output, the kind's options, the source's probe, the limits. */
type ArgvBuilder<O> = (
  input: string,
  output: string,
  options: O,
  source: ProbeResult,
  limit: DurationLimit,
) => string[];

/**
 * One FFmpeg run from the input to `output.<extension>` in the task's directory, then the probe of
 * what it wrote. The audio and video kinds differ only in their argv and in the file they report.
 */
export async function transcode<O extends TrimOptions>(
  ctx: KindContext<unknown>,
  input: KindInput,
  options: O,
  extension: string,
  argv: ArgvBuilder<O>,
): Promise<{ path: string; probe: ProbeResult }> {
  const out = path.join(ctx.workDir, `output.${extension}`);
  const limits = ctx.config.limits;
  await runFfmpeg(argv(input.path, out, options, input.probe, limits), {
    timeoutMs: ctx.timeoutMs,
    signal: ctx.signal,
    expectedDurationSeconds: expectedDuration(options, input.probe),
    onProgress: ctx.progress,
  });
  // An MP4/MOV/M4A output is read in-process (the same facts as ffprobe's, without its start-up);
  // anything else, or anything that reader does not model, is probed.
  const probe =
    (ISO_BMFF.has(extension) ? await readMp4Facts(out) : null) ??
    (await probeFile(
      out,
      { maxPixels: Number.MAX_SAFE_INTEGER, maxDurationSeconds: Number.MAX_SAFE_INTEGER },
      { signal: ctx.signal, verifyDuration: false },
    ));
  // Output cut at the duration limit although the source should have ended before: refuse it.
  checkOutputCap(probe.duration, options, input.probe, limits);
  return { path: out, probe };
}
