import { AppError, type ErrorDetail } from '../../errors.js';
import { IMAGE_URL_POSITIONS } from '../../media/index.js';

// The options segment of an image URL (docs/image-urls.md): `name:value` pairs joined by commas,
// such as `width:320,height:180,fit:cover,format:auto`. Names and ranges are the `image` kind's
// where they overlap; short aliases (w, h, q, f, p, bg, t) are accepted and canonicalised.

export const IMAGE_URL_FITS = ['contain', 'cover', 'fill', 'inside', 'outside'] as const;
export const IMAGE_URL_FORMATS = ['jpeg', 'png', 'webp', 'avif', 'gif', 'auto'] as const;
const QUALITY_LEVELS = { very_low: 30, low: 50, medium: 70, high: 85, very_high: 95 } as const;

export type ImageUrlFit = (typeof IMAGE_URL_FITS)[number];
export type ImageUrlPosition = (typeof IMAGE_URL_POSITIONS)[number];
export type ImageUrlFormat = (typeof IMAGE_URL_FORMATS)[number];

export interface ImageUrlOptions {
  width?: number;
  height?: number;
  fit?: ImageUrlFit;
  position?: ImageUrlPosition;
  format?: ImageUrlFormat;
  quality?: number;
  dpr?: number;
  /** rrggbb or rrggbbaa, without '#'. */
  background?: string;
  blur?: number;
  sharpen?: number;
  rotate?: 0 | 90 | 180 | 270;
  time?: number;
  /** 1: a source smaller than the box is enlarged to it (default 0: never upscaled, as imgproxy). */
  enlarge?: 0 | 1;
  preset?: string;
}

export type ImageUrlOptionName = keyof ImageUrlOptions;
/** The canonical order of the options string. */
export const OPTION_ORDER: readonly ImageUrlOptionName[] = [
  'preset',
  'width',
  'height',
  'fit',
  'position',
  'format',
  'quality',
  'dpr',
  'background',
  'blur',
  'sharpen',
  'rotate',
  'time',
  'enlarge',
];
const ALIASES: Readonly<Record<string, ImageUrlOptionName>> = {
  w: 'width',
  h: 'height',
  p: 'position',
  f: 'format',
  q: 'quality',
  bg: 'background',
  t: 'time',
};

const bad = (field: string, message: string): AppError =>
  new AppError('validation_failed', `image option ${field}: ${message}`, { details: [{ field, message }] });

function number(field: string, raw: string, min: number, max: number, integer: boolean): number {
  const n = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n)))
    throw bad(
      field,
      `must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}, got ${JSON.stringify(raw)}`,
    );
  return n;
}

function oneOf<T extends string>(field: string, raw: string, allowed: readonly T[]): T {
  const found = allowed.find((a) => a === raw);
  if (found === undefined) throw bad(field, `must be one of ${allowed.join(', ')}, got ${JSON.stringify(raw)}`);
  return found;
}

/** One option's value checked against its range. */
function parseValue(name: ImageUrlOptionName, raw: string): ImageUrlOptions[ImageUrlOptionName] {
  switch (name) {
    case 'width':
    case 'height':
      return number(name, raw, 1, 8192, true);
    case 'fit':
      return oneOf(name, raw, IMAGE_URL_FITS);
    case 'position':
      return oneOf(name, raw, IMAGE_URL_POSITIONS);
    case 'format':
      return oneOf(name, raw === 'jpg' ? 'jpeg' : raw, IMAGE_URL_FORMATS);
    case 'quality': {
      const level = Object.entries(QUALITY_LEVELS).find(([k]) => k === raw);
      return level ? level[1] : number(name, raw, 1, 100, true);
    }
    case 'dpr':
      return number(name, raw, 1, 4, false);
    case 'background':
      if (!/^([0-9a-f]{6}|[0-9a-f]{8})$/i.test(raw))
        throw bad(name, `must be rrggbb or rrggbbaa (hex, no #), got ${JSON.stringify(raw)}`);
      return raw.toLowerCase();
    case 'blur':
      return number(name, raw, 0.3, 100, false);
    case 'sharpen':
      return number(name, raw, 0.3, 10, false);
    case 'rotate': {
      const r = number(name, raw, 0, 270, true);
      if (r !== 0 && r !== 90 && r !== 180 && r !== 270) throw bad(name, `must be 0, 90, 180 or 270, got ${raw}`);
      return r;
    }
    case 'time':
      return number(name, raw, 0, 86_400, false);
    case 'enlarge': {
      const e = number(name, raw === 'true' ? '1' : raw === 'false' ? '0' : raw, 0, 1, true);
      return e === 1 ? 1 : 0;
    }
    case 'preset':
      if (!PRESET_NAME.test(raw))
        throw bad(name, `must be a preset name (a-z, 0-9, - and _), got ${JSON.stringify(raw)}`);
      return raw;
  }
}

export const PRESET_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

function assign(o: ImageUrlOptions, name: ImageUrlOptionName, value: ImageUrlOptions[ImageUrlOptionName]): void {
  Object.assign(o, { [name]: value });
}

/** Parses an options segment (`-` is none); an unknown, repeated or out-of-range option is a 400 naming it. */
export function parseImageUrlOptions(segment: string): ImageUrlOptions {
  const out: ImageUrlOptions = {};
  if (segment === '-' || segment === '') return out;
  for (const part of segment.split(',')) {
    const colon = part.indexOf(':');
    const rawName = colon < 0 ? part : part.slice(0, colon);
    const name = ALIASES[rawName] ?? OPTION_ORDER.find((n) => n === rawName);
    if (!name) throw bad(rawName || '(empty)', `unknown image option; known: ${OPTION_ORDER.join(', ')}`);
    if (colon < 0) throw bad(name, 'needs a value (name:value)');
    if (out[name] !== undefined) throw bad(name, 'is given twice');
    assign(out, name, parseValue(name, part.slice(colon + 1)));
  }
  return out;
}

/** The options as one string in canonical order and names (what presets store and cache keys use). */
export function formatImageUrlOptions(o: ImageUrlOptions): string {
  const parts: string[] = [];
  for (const name of OPTION_ORDER) {
    const v = o[name];
    if (v !== undefined) parts.push(`${name}:${v}`);
  }
  return parts.length > 0 ? parts.join(',') : '-';
}

/** A preset's options over the URL's own (the URL's win). */
export function withPreset(preset: ImageUrlOptions, own: ImageUrlOptions): ImageUrlOptions {
  const { preset: _name, ...rest } = own;
  return { ...preset, ...rest };
}

/** Problems of an options object given as JSON (POST /image-urls, presets): each checked as in a URL. */
export function checkImageUrlOptions(o: Record<string, unknown>): { options: ImageUrlOptions; details: ErrorDetail[] } {
  const options: ImageUrlOptions = {};
  const details: ErrorDetail[] = [];
  for (const [key, value] of Object.entries(o)) {
    if (value === undefined) continue;
    const name = OPTION_ORDER.find((n) => n === key);
    try {
      if (!name) throw bad(key, 'unknown image option');
      assign(options, name, parseValue(name, String(value)));
    } catch (err) {
      if (err instanceof AppError && err.details) details.push(...err.details);
      else throw err;
    }
  }
  return { options, details };
}
