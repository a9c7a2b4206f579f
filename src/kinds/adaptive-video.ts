import fs from 'node:fs/promises';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import type { ErrorDetail } from '../errors.js';
import {
  ADAPTIVE_ENCODERS,
  DASH_MANIFEST,
  HLS_MIME,
  MASTER_PLAYLIST,
  MediaTransformError,
  PACKAGE_ENTRY,
  buildAdaptiveArgs,
  checkOutputCap,
  ffmpegHasEncoder,
  ladderProblems,
  mediaBinaries,
  manifestDuration,
  masterVariants,
  normalizeMaster,
  normalizeMediaPlaylist,
  packageEntryMime,
  resolveLadder,
  runFfmpeg,
  segmentDurations,
  type AdaptiveCodec,
} from '../media/index.js';
import { HLS_DASH_FORMAT } from '../shapes/files.js';
import { PackagePublisher, mediaPlaylists } from './adaptive-publisher.js';
import { defineKind } from './define.js';

const RungOption = Type.Object(
  {
    height: Type.Integer({
      minimum: 144,
      maximum: 4320,
      description: 'Rung height in pixels (width follows the source’s aspect ratio)',
    }),
    bitrate: Type.Optional(
      Type.Integer({ minimum: 100_000, maximum: 100_000_000, description: 'Video bitrate in bits per second' }),
    ),
  },
  { additionalProperties: false },
);

const Options = Type.Object(
  {
    ladder: Type.Optional(Type.Array(RungOption, { minItems: 1, maxItems: 6 })),
    codec: Type.Optional(Type.Enum(['h264', 'h265', 'av1'], { default: 'h264' })),
    segment_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, default: 4 })),
    dash: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);
type O = Static<typeof Options>;

export const DEFAULT_SEGMENT_SECONDS = 4;

const encoderFound = new Map<string, Promise<boolean>>();
/** Whether this FFmpeg has the codec's encoder (asked until it says yes, then kept). */
function hasEncoder(codec: AdaptiveCodec): Promise<boolean> {
  const name = ADAPTIVE_ENCODERS[codec];
  const at = `${mediaBinaries().ffmpeg}\n${name}`;
  let found = encoderFound.get(at);
  if (!found) {
    found = ffmpegHasEncoder(name);
    encoderFound.set(at, found);
    // Only a yes is kept: a no (or an FFmpeg too busy to answer in time) is asked again next time.
    void found.then((yes) => {
      if (!yes) encoderFound.delete(at);
    });
  }
  return found;
}

const unavailable = (codec: AdaptiveCodec) =>
  `codec ${codec} needs FFmpeg's ${ADAPTIVE_ENCODERS[codec]} encoder, which this server's FFmpeg does not have; use h264 or install an FFmpeg build with it`;

/**
 * adaptive_video: an HLS and DASH package from one set of CMAF segments (see
 * src/media/adaptive-args.ts); the output is the master playlist, its entries stored beside it.
 */
export const adaptiveVideoKind = defineKind({
  kind: 'adaptive_video',
  options: Options,
  needsInputFile: true,
  inputKinds: ['video'],
  problems(o) {
    const out: ErrorDetail[] = [];
    const seen = new Set<number>();
    (o.ladder ?? []).forEach((r, i) => {
      const h = Math.round(r.height / 2) * 2;
      if (seen.has(h)) out.push({ field: `ladder[${i}].height`, message: `${r.height} appears twice in the ladder` });
      seen.add(h);
    });
    return out;
  },
  fileProblems: (o, file) => ladderProblems(o.ladder, file.height ?? undefined),
  // Checked for the task, and for a workflow step or an automation naming it (POST /tasks refuses both).
  async unavailable(o) {
    const codec = o.codec ?? 'h264';
    return (await hasEncoder(codec)) ? [] : [{ field: 'codec', message: unavailable(codec) }];
  },
  check(o, input) {
    const problems = ladderProblems(o.ladder, input.probe.height);
    if (problems.length > 0)
      throw new MediaTransformError('invalid_for_source', problems.map((p) => `${p.field}: ${p.message}`).join('; '));
  },
  async run(ctx, input) {
    const o: O = ctx.options;
    const codec = o.codec ?? 'h264';
    if (!(await hasEncoder(codec))) throw new MediaTransformError('transform_failed', unavailable(codec));
    const segmentSeconds = o.segment_seconds ?? DEFAULT_SEGMENT_SECONDS;
    const dash = o.dash ?? true;
    const ladder = resolveLadder(o.ladder, input.probe.height ?? 0, codec);
    const dir = path.join(ctx.workDir, 'package');
    await fs.mkdir(dir);
    const about = { codec, segmentSeconds, dash, hasAudio: input.probe.hasAudio };
    const writer = ctx.packageWriter();
    // Playable early: the package is stored as it grows (adaptive-publisher.ts).
    const publisher =
      writer &&
      new PackagePublisher(writer, {
        dir,
        playlists: mediaPlaylists(ladder.length, input.probe.hasAudio),
        segmentSeconds,
        head: (master) => ({ text: master, ...headOf(master, about), ref: ctx.target.ref ?? 'hls' }),
      });
    // A pass that fails (storage, a taken filename) stops FFmpeg at once, and its error is the task's.
    const passFailed = new AbortController();
    publisher?.start(() => passFailed.abort());
    try {
      await runFfmpeg(
        buildAdaptiveArgs(input.path, dir, { ladder, codec, segmentSeconds }, input.probe, ctx.config.limits),
        {
          timeoutMs: ctx.timeoutMs,
          signal: AbortSignal.any([ctx.signal, passFailed.signal]),
          expectedDurationSeconds: input.probe.duration,
          onProgress: ctx.progress,
        },
      );
    } catch (err) {
      throw (
        (await publisher?.stop().then(
          () => null,
          (failure: unknown) => failure,
        )) ?? err
      );
    }
    await publisher?.stop();
    const result = await packageResult(ctx.target.ref, dir, about);
    // A package cut at the duration limit although the source should have ended before: refused, as for video.
    checkOutputCap(result.files[0]?.duration, {}, input.probe, ctx.config.limits);
    return result;
  },
});

/** Tidies what FFmpeg wrote into the package and describes it as the task's output file. */
async function packageResult(ref: string | null | undefined, dir: string, about: PackageAbout) {
  const masterPath = path.join(dir, MASTER_PLAYLIST);
  const master = normalizeMaster(await fs.readFile(masterPath, 'utf8'));
  await fs.writeFile(masterPath, master);
  const manifest = await fs.readFile(path.join(dir, DASH_MANIFEST), 'utf8');
  if (!about.dash) await fs.rm(path.join(dir, DASH_MANIFEST));
  const names = (await fs.readdir(dir)).filter((n) => n !== MASTER_PLAYLIST).sort();
  let duration = manifestDuration(manifest);
  for (const name of names) {
    if (!PACKAGE_ENTRY.test(name)) throw new Error(`FFmpeg wrote an unexpected package entry ${name}`);
    if (!name.endsWith('.m3u8')) continue;
    const text = await fs.readFile(path.join(dir, name), 'utf8');
    await fs.writeFile(path.join(dir, name), normalizeMediaPlaylist(text));
    duration ??= segmentDurations(text).reduce((a, b) => a + b, 0);
  }
  const head = headOf(master, about);
  return {
    files: [
      {
        path: masterPath,
        ...head.facts,
        duration,
        ref: ref ?? 'hls',
        metadata: head.metadata,
        package: { dir, entries: names.map((name) => ({ name, mime: packageEntryMime(name) })) },
      },
    ],
    results: head.metadata,
  };
}

type PackageAbout = { codec: AdaptiveCodec; segmentSeconds: number; dash: boolean; hasAudio: boolean };

/** The head file's facts and metadata (its rungs) from the master playlist. */
function headOf(master: string, about: PackageAbout) {
  const variants = masterVariants(master);
  const top = variants.reduce((a, b) => ((b.height ?? 0) > (a?.height ?? 0) ? b : a), variants[0]);
  if (!top) throw new MediaTransformError('transform_failed', 'FFmpeg wrote a master playlist without variants');
  const rungs = variants.map((v) => ({
    height: v.height,
    width: v.width,
    bandwidth: v.bandwidth,
    codecs: v.codecs,
    playlist: v.uri,
  }));
  return {
    facts: {
      kind: 'video',
      format: about.dash ? HLS_DASH_FORMAT : 'hls',
      extension: 'm3u8',
      mime: HLS_MIME,
      width: top.width,
      height: top.height,
    },
    metadata: {
      rungs,
      codec: about.codec,
      segment_seconds: about.segmentSeconds,
      audio: about.hasAudio,
      dash: about.dash,
    },
  };
}
