import {
  chatStructured,
  evenTimes,
  findSceneCuts,
  imageUrl,
  videoFrameUrls,
  type ChatMessage,
  type ChatResult,
  type FrameImage,
  type MediaContext,
  type SpeechResult,
  type StructuredOutput,
} from '../ai/index.js';
import type { KindContext, KindInput } from './define.js';
import { SET_CHAT } from './engines.js';
import { EngineUnavailableError } from '../ai/index.js';

// What the kinds that ask the chat model show it: the image itself, or frames of a video (at its
// scene changes or spread evenly), and the transcript with times.

type Ctx = Pick<KindContext<unknown>, 'ai' | 'workDir' | 'signal' | 'config'>;

/** Frames sent per request: vision models take a handful of images well, dozens badly. */
export const MAX_FRAMES = 6;

/** The middle of each scene (scene cuts by scdet), at most `max`, spread over the video. */
export async function sceneMiddles(ctx: Ctx, input: KindInput, max = MAX_FRAMES): Promise<number[]> {
  const duration = input.probe.duration ?? 0;
  const cuts = await findSceneCuts(input.path, { probe: input.probe, signal: ctx.signal });
  const bounds = [0, ...cuts.map((c) => c.time), duration];
  const middles = bounds.slice(0, -1).map((start, i) => (start + bounds[i + 1]!) / 2);
  if (middles.length <= max) return middles;
  return evenTimes(middles.length, max).map((i) => middles[Math.floor(i)]!);
}

/** The image itself, or frames of a video at `times` (evenly spread when not given). */
export async function imagesOf(ctx: Ctx, input: KindInput, times?: number[]): Promise<FrameImage[]> {
  if (input.probe.kind === 'image') return [await imageUrl(input.path, { maxPixels: ctx.config.limits.maxPixels })];
  if (input.probe.kind !== 'video') return [];
  const duration = input.probe.duration ?? 0;
  return videoFrameUrls(input.path, times ?? evenTimes(duration, MAX_FRAMES), {
    workDir: ctx.workDir,
    duration,
    signal: ctx.signal,
  });
}

export function mediaContext(input: KindInput, images: FrameImage[], speech: SpeechResult | null): MediaContext {
  return {
    kind: input.probe.kind,
    filename: input.file.filename,
    ...(input.probe.duration ? { duration: input.probe.duration } : {}),
    images,
    ...(speech?.detected ? { transcript: speech.segments, language: speech.language } : {}),
  };
}

/** One structured answer from the configured chat model. */
export async function askChat<T>(
  ctx: Ctx,
  kind: string,
  messages: ChatMessage[],
  output: StructuredOutput<T>,
): Promise<ChatResult<T>> {
  const chat = ctx.ai.chat;
  if (!chat) throw new EngineUnavailableError(kind, `${kind} needs a chat model: ${SET_CHAT}`);
  return chatStructured(chat.endpoint, { model: chat.model, messages, output, signal: ctx.signal });
}
