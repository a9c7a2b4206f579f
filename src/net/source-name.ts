// The name a source URL gives its file (`https://host/videos/Clip%201.mp4?sig=…` → `Clip 1.mp4`):
// the title of the media a fetch makes, so the library shows what the person added rather than
// an id (the stored file keeps its own unique name). Undefined when the path names nothing.

const MAX = 200;

export function sourceName(url: string): string | undefined {
  let last: string;
  try {
    last = new URL(url).pathname.split('/').filter(Boolean).at(-1) ?? '';
    last = decodeURIComponent(last);
  } catch {
    return undefined;
  }
  // No control characters in a title; trimmed to a sensible length.
  const name = [...last]
    .filter((c) => c.charCodeAt(0) > 0x1f && c.charCodeAt(0) !== 0x7f)
    .join('')
    .trim();
  return name ? name.slice(0, MAX) : undefined;
}
