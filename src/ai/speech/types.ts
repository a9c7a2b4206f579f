// The one result type both speech engines (local pocketsphinx, OpenAI-compatible provider) produce.
import type { EngineInfo } from '../engine.js';

export interface SpeechWord {
  text: string;
  /** Seconds from the start of the media. */
  start: number;
  end: number;
  /** 0–1; null when the engine gives none (most providers do not score words). */
  confidence: number | null;
  /** 0-based speaker number when the engine labels speakers. */
  speaker?: number;
}

export interface SpeechSegment {
  start: number;
  end: number;
  text: string;
  confidence: number | null;
  speaker?: number;
  words: SpeechWord[];
}

export interface SpeechResult {
  /** Whether any speech was recognised. */
  detected: boolean;
  /** ISO 639-1, null when unknown. */
  language: string | null;
  /** Seconds of audio analysed. */
  duration: number;
  /** Every word in order (the same objects as in `segments`). */
  words: SpeechWord[];
  segments: SpeechSegment[];
  /** Number of distinct speakers when the engine labels them; null when it cannot tell. */
  speakers: number | null;
  engine: EngineInfo;
}

/** Mean of the known confidences, null when none is known. */
export function meanConfidence(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null && Number.isFinite(v));
  return known.length === 0 ? null : known.reduce((a, b) => a + b, 0) / known.length;
}

/** Rounds seconds to milliseconds for output. */
export const ms3 = (seconds: number): number => Math.round(seconds * 1000) / 1000;
