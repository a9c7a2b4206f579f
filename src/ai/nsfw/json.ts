// The nsfw intelligence document (reference 2.8, gen B shape: scores 0–1) with the engine.
// violence and gore are absent from the local engine's output; `not_scored` says why.
import type { EngineInfo } from '../engine.js';
import type { NsfwResult } from './detect.js';
import type { FlaggedSpan, NsfwClasses } from './scores.js';

export interface NsfwIntelligence {
  object: 'intelligence';
  kind: 'nsfw';
  detected: boolean;
  nudity: number;
  sexual: number;
  violence?: number;
  gore?: number;
  confidence: number;
  classes: NsfwClasses;
  not_scored?: { violence?: string; gore?: string };
  timeline?: FlaggedSpan[];
  frames?: NsfwResult['frames'];
  engine: EngineInfo;
}

const r3 = (v: number) => Math.round(v * 1000) / 1000;

export const LOCAL_NOT_SCORED =
  'the local model (nsfwjs MobileNetV2) has no such class: it knows only Drawing, Hentai, Neutral, Porn and Sexy; configure a provider for this score';

export function nsfwIntelligence(result: NsfwResult): NsfwIntelligence {
  const classes = Object.fromEntries(Object.entries(result.classes).map(([k, v]) => [k, r3(v)]));
  return {
    object: 'intelligence',
    kind: 'nsfw',
    detected: result.detected,
    nudity: r3(result.nudity),
    sexual: r3(result.sexual),
    confidence: r3(result.confidence),
    classes: {
      drawing: classes.drawing ?? 0,
      hentai: classes.hentai ?? 0,
      neutral: classes.neutral ?? 0,
      porn: classes.porn ?? 0,
      sexy: classes.sexy ?? 0,
    },
    not_scored: { violence: LOCAL_NOT_SCORED, gore: LOCAL_NOT_SCORED },
    ...(result.timeline
      ? {
          timeline: result.timeline.map((s) => ({
            ...s,
            start: r3(s.start),
            end: r3(s.end),
            nudity: r3(s.nudity),
            sexual: r3(s.sexual),
          })),
        }
      : {}),
    ...(result.frames
      ? { frames: { ...result.frames, per_second: Math.round(result.frames.per_second * 10) / 10 } }
      : {}),
    engine: result.engine,
  };
}
