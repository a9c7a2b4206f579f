// The speech intelligence document the speech kind stores (reference 2.9, gen B shape), plus
// word times and the engine that produced it. id/created/updated are the task layer's.
import type { EngineInfo } from '../engine.js';
import { meanConfidence, ms3, type SpeechResult } from './types.js';

export interface SpeechTimelineWord {
  text: string;
  start: number;
  end: number;
  confidence: number | null;
}

export interface SpeechTimelineEntry {
  index: number;
  start: number;
  end: number;
  detected: true;
  speaker?: number;
  text: string;
  confidence: number | null;
  words: SpeechTimelineWord[];
}

export interface SpeechIntelligence {
  object: 'intelligence';
  kind: 'speech';
  detected: boolean;
  /** ISO 639-1, null when nothing was recognised. */
  language: string | null;
  /** Distinct speakers when the engine labels them; null when it cannot tell them apart. */
  speakers: number | null;
  /** Mean confidence of the recognised words (0–1); null when the engine gives none. */
  confidence: number | null;
  /** One string per timeline entry. */
  text: string[];
  timeline: SpeechTimelineEntry[];
  duration: number;
  engine: EngineInfo;
}

const round = (v: number | null): number | null => (v === null ? null : Math.round(v * 1000) / 1000);

export function speechIntelligence(result: SpeechResult): SpeechIntelligence {
  const timeline = result.segments.map((s, index): SpeechTimelineEntry => ({
    index,
    start: ms3(s.start),
    end: ms3(s.end),
    detected: true,
    ...(s.speaker !== undefined ? { speaker: s.speaker } : {}),
    text: s.text,
    confidence: round(s.confidence),
    words: s.words.map((w) => ({
      text: w.text,
      start: ms3(w.start),
      end: ms3(w.end),
      confidence: round(w.confidence),
    })),
  }));
  const wordConfidence = meanConfidence(result.words.map((w) => w.confidence));
  return {
    object: 'intelligence',
    kind: 'speech',
    detected: result.detected,
    language: result.language,
    speakers: result.speakers,
    confidence: round(wordConfidence ?? meanConfidence(result.segments.map((s) => s.confidence))),
    text: timeline.map((t) => t.text),
    timeline,
    duration: ms3(result.duration),
    engine: result.engine,
  };
}
