// Maps the API's 1–100 quality (or a named level) to encoder settings. The ranges are chosen so
// that the default, 60 ("medium"), lands near each encoder's own default.

export type QualityLevel = 'very_low' | 'low' | 'medium' | 'high' | 'very_high';
export type VideoCodec = 'h264' | 'h265' | 'vp9' | 'av1';

export const QUALITY_LEVELS: Readonly<Record<QualityLevel, number>> = {
  very_low: 20,
  low: 40,
  medium: 60,
  high: 80,
  very_high: 95,
};

/** Video quality when the task gives none ("medium"). */
export const DEFAULT_VIDEO_QUALITY = 60;
/** Image quality when the task gives none (the reference's default). */
export const DEFAULT_IMAGE_QUALITY = 80;

/** Named level or number → integer 1–100 (numbers are clamped, not rejected: the engine validated). */
export function qualityToNumber(q: number | QualityLevel): number {
  const n = typeof q === 'number' ? q : QUALITY_LEVELS[q];
  if (!Number.isFinite(n)) return DEFAULT_VIDEO_QUALITY;
  return Math.min(100, Math.max(1, Math.round(n)));
}

/**
 * CRF at quality 100 (best) and 1 (worst). Quality 60 gives h264 26, h265 28 (x265's default,
 * which looks like x264 ~23), vp9 31 (libvpx's recommendation for 1080p), av1 34 (SVT-AV1's
 * default is 35). h265 sits 2–4 above h264 because its CRF scale is shifted by about that much.
 */
const CRF_RANGES: Readonly<Record<VideoCodec, readonly [best: number, worst: number]>> = {
  h264: [16, 40],
  h265: [18, 43],
  vp9: [15, 55],
  av1: [20, 55],
};

/** Linear map of quality 1–100 onto the codec's CRF range, rounded to an integer. */
export function crfFor(codec: VideoCodec, quality: number): number {
  const [best, worst] = CRF_RANGES[codec];
  const q = qualityToNumber(quality);
  return Math.round(worst - ((q - 1) * (worst - best)) / 99);
}
