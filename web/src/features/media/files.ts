import type { Media, MediaFile } from '../../lib/api/objects';

// Which of a media's files to show where: its thumbnail, its storyboard, its tracks.

const THUMB_REFS = ['thumbnail', 'poster', 'preview', 'cover'];

/**
 * The picture for a card: a derived thumbnail/poster image when there is one, else the smallest
 * image file of the media that is at least 200 px wide, else its original image; none for audio
 * or a video without a derived image.
 */
export function thumbnailOf(media: Media): MediaFile | undefined {
  // A storyboard's sprite sheet is an image of the media too, but no thumbnail.
  const images = media.files.filter((f) => f.kind === 'image' && f.status === 'ready' && f.ref !== 'thumbnails_sprite');
  const named = images.find((f) => f.ref !== undefined && THUMB_REFS.includes(f.ref));
  if (named) return named;
  const sized = images
    .filter((f) => (f.width ?? 0) >= 200)
    .sort((a, b) => (a.width ?? 0) * (a.height ?? 0) - (b.width ?? 0) * (b.height ?? 0));
  return sized[0] ?? images.find((f) => f.ref === 'original') ?? images[0];
}

/** The storyboard VTT (a `thumbnails` task's output) of a video, if it has one. */
export function storyboardOf(media: Media): MediaFile | undefined {
  return media.files.find((f) => f.kind === 'thumbnails' && f.type.startsWith('text/vtt'));
}

export function originalOf(media: Media): MediaFile | undefined {
  return media.files.find((f) => f.ref === 'original') ?? media.files[0];
}

export const HLS_TYPE = 'application/vnd.apple.mpegurl';

/** The media's adaptive streaming package (its newest ready HLS master playlist), if it has one. */
export function adaptiveOf(media: Media): MediaFile | undefined {
  return media.files.filter((f) => f.status === 'ready' && f.type.startsWith(HLS_TYPE)).at(-1);
}

/** Video or audio sources for the player, the original first (the browser plays the first it can). */
export function playableSources(media: Media): MediaFile[] {
  const kind = media.kind === 'audio' ? 'audio' : 'video';
  // An adaptive_video master playlist (kind video) is no <source>: the player streams it (adaptive.tsx).
  const files = media.files.filter((f) => f.kind === kind && f.status === 'ready' && !f.type.startsWith(HLS_TYPE));
  return files.sort((a, b) => (a.ref === 'original' ? -1 : b.ref === 'original' ? 1 : 0));
}

export function filesOfKind(media: Media, kind: string): MediaFile[] {
  return media.files.filter((f) => f.kind === kind && f.status === 'ready');
}

/** A duration in seconds as m:ss (h:mm:ss past an hour). */
export function formatDuration(s: number | undefined): string {
  if (s === undefined) return '—';
  const total = Math.max(0, Math.round(s));
  const h = Math.floor(total / 3600);
  const m = Math.floor(total / 60) % 60;
  const sec = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

/** The text of a file of this origin (a VTT or JSON output). */
export async function fetchText(url: string): Promise<string> {
  const res = await fetch(url, { credentials: 'same-origin' });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return res.text();
}
