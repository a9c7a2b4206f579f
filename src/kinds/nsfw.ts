import { Type, type Static } from 'typebox';
import { evenTimes, nsfwImage, nsfwIntelligence, nsfwVideo, progressReporter } from '../ai/index.js';
import { askChat, imagesOf } from './chat-context.js';
import { defineKind, type KindContext, type KindInput } from './define.js';
import { chatPlan, chosen, EngineOption, engineUse, SET_CHAT, type Engines } from './engines.js';
import { jsonOutput } from './intelligence.js';
import {
  CATEGORIES,
  frameScores,
  NSFW_OUTPUT,
  nsfwMessages,
  visionSpans,
  type Category,
  type Scores,
} from './nsfw-vision.js';

const Options = Type.Object(
  {
    engine: EngineOption,
    /** A score at or above this sets `detected` (default 0.5). */
    threshold: Type.Optional(Type.Number({ minimum: 0.01, maximum: 1 })),
    /** Seconds between the frames of a video that are judged (default 1). */
    interval: Type.Optional(Type.Number({ minimum: 0.1, maximum: 3600 })),
  },
  { additionalProperties: false },
);
type Options = Static<typeof Options>;

/** Frames of a video a vision model judges at most, in requests of BATCH. */
const PROVIDER_FRAMES = 16;
const BATCH = 8;

const r3 = (v: number) => Math.round(v * 1000) / 1000;

async function local(ctx: KindContext<Options>, input: KindInput, threshold: number) {
  const o = ctx.options;
  const common = { threshold, signal: ctx.signal, maxPixels: ctx.config.limits.maxPixels };
  const result =
    input.probe.kind === 'image'
      ? await nsfwImage(input.path, common)
      : await nsfwVideo(input.path, {
          ...common,
          probe: input.probe,
          onProgress: ctx.progress,
          ...(o.interval ? { interval: o.interval } : {}),
        });
  const { engine: info, ...doc } = nsfwIntelligence(result);
  const note = `scores nudity and sexual content only; violence and gore are not scored (absent): the model has no such classes. A vision chat model scores all four: ${SET_CHAT}`;
  return { ...doc, engine: 'local' as const, engines: [engineUse('nsfw', info, note)] };
}

async function provider(ctx: KindContext<Options>, input: KindInput, threshold: number) {
  const duration = input.probe.duration ?? 0;
  const video = input.probe.kind === 'video';
  const interval = video ? Math.max(ctx.options.interval ?? 1, duration / PROVIDER_FRAMES) : 0;
  const times = video
    ? evenTimes(duration, Math.max(1, Math.min(PROVIDER_FRAMES, Math.ceil(duration / interval))))
    : [];
  const images = await imagesOf(ctx, input, video ? times : undefined);
  const progress = progressReporter(ctx.progress);
  const scores: Scores[] = [];
  let engine = null;
  for (let first = 0; first < images.length; first += BATCH) {
    const batch = images.slice(first, first + BATCH);
    const answer = await askChat(ctx, 'nsfw', nsfwMessages(batch, first), NSFW_OUTPUT);
    scores.push(...frameScores(answer.value.frames, batch.length, first));
    engine = answer.engine;
    progress.report((first + batch.length) / images.length);
  }
  const max = (c: Category) => Math.max(0, ...scores.map((s) => s[c]));
  const top: Scores = { nudity: max('nudity'), sexual: max('sexual'), violence: max('violence'), gore: max('gore') };
  const highest = Math.max(...CATEGORIES.map((c) => top[c]));
  const detected = highest >= threshold;
  return {
    object: 'intelligence' as const,
    kind: 'nsfw' as const,
    detected,
    nudity: r3(top.nudity),
    sexual: r3(top.sexual),
    violence: r3(top.violence),
    gore: r3(top.gore),
    confidence: r3(detected ? highest : 1 - highest),
    ...(video
      ? {
          timeline: visionSpans(
            scores.map((s, i) => ({ ...s, time: images[i]?.time ?? 0 })),
            interval,
            threshold,
            duration,
          ).map((s) => ({ ...s, start: r3(s.start), end: r3(s.end) })),
          frames: { interval: r3(interval), count: images.length },
        }
      : {}),
    engine: 'provider' as const,
    engines: engine ? [engineUse('nsfw', engine)] : [],
  };
}

function nsfwPlan(o: Options, e: Engines) {
  const localProblem = e.local.nsfw.found ? null : `the local NSFW model is not available (${e.local.nsfw.message})`;
  return chatPlan('nsfw', o.engine, e, localProblem);
}

/**
 * nsfw: scores 0–1 for nudity, sexual content, violence and gore (intelligence JSON, reference
 * 2.8); for a video, frames every `interval` seconds and a timeline of the flagged spans. The
 * local model (nsfwjs MobileNetV2) judges nudity and sexual content only: violence and gore are
 * then absent, and `engines` says why. The verdict goes into the media's metadata (`metadata.nsfw`).
 */
export const nsfwKind = defineKind({
  kind: 'nsfw',
  annotates: 'nsfw',
  options: Options,
  needsInputFile: true,
  inputKinds: ['image', 'video'],
  engines: (o, e) => nsfwPlan(o, e),
  async run(ctx, input) {
    const plan = nsfwPlan(ctx.options, await ctx.ai.engines());
    const threshold = ctx.options.threshold ?? 0.5;
    const doc =
      chosen('nsfw', plan) === 'provider' ? await provider(ctx, input, threshold) : await local(ctx, input, threshold);
    // Absent scores stay absent (the local model does not judge violence or gore).
    const scores = {
      nudity: doc.nudity,
      sexual: doc.sexual,
      ...(doc.violence !== undefined ? { violence: doc.violence } : {}),
      ...(doc.gore !== undefined ? { gore: doc.gore } : {}),
    };
    return {
      files: [await jsonOutput(ctx, input, 'nsfw', doc, { engine: doc.engine, engines: doc.engines })],
      annotate: {
        key: 'nsfw',
        value: { detected: doc.detected, ...scores, confidence: doc.confidence, engine: doc.engine },
      },
    };
  },
});
