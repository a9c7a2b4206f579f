import { useRef, useState, type MouseEvent } from 'react';
import { Link } from 'react-router';
import { adaptiveOf, fetchText, formatDuration, originalOf, storyboardOf, thumbnailOf } from './files';
import { useImageUrl } from './image-urls';
import type { Media } from '../../lib/api/objects';
import { storyboardTiles, tileAt, type StoryboardTile } from './vtt';

// A media card of the library grid: its thumbnail (or a neutral icon), and for a video with a
// storyboard, hovering scrubs it: the mouse's x picks a time, the time a cue, the cue a tile.

const storyboards = new Map<string, Promise<StoryboardTile[]>>();

function loadStoryboard(url: string): Promise<StoryboardTile[]> {
  let p = storyboards.get(url);
  if (!p) {
    p = fetchText(url).then((text) => storyboardTiles(text, url));
    p.catch(() => storyboards.delete(url));
    storyboards.set(url, p);
  }
  return p;
}

export function KindIcon({ kind }: { kind: string | undefined }) {
  const path =
    kind === 'video'
      ? 'M4 6h11v12H4zM15 10l5-3v10l-5-3z'
      : kind === 'audio'
        ? 'M9 18V6l10-2v12M9 18a3 3 0 1 1-6 0 3 3 0 0 1 6 0zm10-2a3 3 0 1 1-6 0 3 3 0 0 1 6 0z'
        : kind === 'image'
          ? 'M4 5h16v14H4zM4 16l5-5 4 4 3-3 4 4'
          : 'M6 3h9l4 4v14H6zM15 3v4h4';
  return (
    <svg className="kind-icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <path d={path} fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinejoin="round" />
    </svg>
  );
}

export function MediaThumb({ media }: { media: Media }) {
  const thumb = thumbnailOf(media);
  // The card's picture through an image URL at the card's size (a video's poster frame when it has
  // no thumbnail image), never the full original.
  const original = originalOf(media);
  // (A video whose frame size was never probed has no frame to show.)
  const source =
    thumb ?? (media.kind === 'video' && original?.kind === 'video' && original.width ? original : undefined);
  const picture = useImageUrl(source?.id, 320, 180, {}, thumb?.url);
  const story = media.kind === 'video' ? storyboardOf(media) : undefined;
  const [tiles, setTiles] = useState<StoryboardTile[] | null>(null);
  const [shown, setShown] = useState<{ tile: StoryboardTile; width: number } | null>(null);
  const box = useRef<HTMLDivElement>(null);

  // Where the mouse is (0–1 across the card) while it hovers, for tiles that arrive after it moved.
  const hover = useRef<number | null>(null);
  const show = (list: StoryboardTile[] | null, fraction: number | null) => {
    if (!list || list.length === 0 || fraction === null || !box.current) return;
    const end = media.duration ?? list[list.length - 1]!.end;
    const tile = tileAt(list, fraction * end);
    setShown(tile ? { tile, width: box.current.getBoundingClientRect().width } : null);
  };
  const onEnter = () => {
    if (!story || tiles) return;
    loadStoryboard(story.url).then(
      (list) => {
        setTiles(list);
        show(list, hover.current);
      },
      () => setTiles([]),
    );
  };
  const onMove = (e: MouseEvent<HTMLDivElement>) => {
    if (!box.current) return;
    const rect = box.current.getBoundingClientRect();
    hover.current = Math.min(1, Math.max(0, (e.clientX - rect.left) / rect.width));
    show(tiles, hover.current);
  };
  const tile = shown?.tile;
  const scale = shown ? shown.width / shown.tile.w : 1;
  return (
    <div
      ref={box}
      className="thumb"
      style={media.background ? { backgroundColor: media.background } : undefined}
      onMouseEnter={onEnter}
      onMouseMove={onMove}
      onMouseLeave={() => {
        hover.current = null;
        setShown(null);
      }}
      data-storyboard={story ? (tiles ? 'loaded' : 'available') : undefined}
    >
      {picture ? (
        <img src={picture.src} srcSet={picture.srcSet} alt="" loading="lazy" decoding="async" />
      ) : (
        <KindIcon kind={media.kind} />
      )}
      {tile ? (
        <div
          className="storyboard-tile"
          data-tile={`${tile.x},${tile.y}`}
          style={{
            width: tile.w,
            height: tile.h,
            backgroundImage: `url("${tile.url}")`,
            backgroundPosition: `-${tile.x}px -${tile.y}px`,
            transform: `scale(${scale})`,
          }}
        />
      ) : null}
      {media.duration !== undefined ? <span className="thumb-duration">{formatDuration(media.duration)}</span> : null}
    </div>
  );
}

export function titleOf(media: Media): string {
  return media.title ?? media.files.find((f) => f.ref === 'original')?.filename ?? media.files[0]?.filename ?? media.id;
}

export function MediaCard({ media, to }: { media: Media; to: string }) {
  return (
    <li className="media-card" data-media={media.id}>
      <Link to={to} className="media-card-link">
        <MediaThumb media={media} />
        <span className="media-card-title">{titleOf(media)}</span>
      </Link>
      <span className="media-card-meta muted small">
        {media.kind ?? 'empty'}
        {media.width && media.height ? ` · ${media.width}×${media.height}` : ''}
        {adaptiveOf(media) ? ' · streams (HLS)' : ''}
      </span>
    </li>
  );
}
