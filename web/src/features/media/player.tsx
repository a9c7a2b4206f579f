import {
  MediaCaptionsButton,
  MediaControlBar,
  MediaController,
  MediaFullscreenButton,
  MediaMuteButton,
  MediaPlayButton,
  MediaPreviewChapterDisplay,
  MediaPreviewThumbnail,
  MediaPreviewTimeDisplay,
  MediaTimeDisplay,
  MediaTimeRange,
  MediaVolumeRange,
} from 'media-chrome/react';
import { useEffect, useRef, useState, type RefObject } from 'react';
import { adaptiveOf, fetchText, originalOf, playableSources } from './files';
import { QualityMenu, useAdaptive } from './adaptive';
import { useImageUrl } from './image-urls';
import type { Media, MediaFile } from '../../lib/api/objects';
import { isRecord } from '../../lib/guards';

// The player: media-chrome's controls (bundled, accessible buttons and ranges with keyboard
// support) around a native <video> or <audio>, with the media's tracks — subtitles (a `subtitles`
// output in WebVTT), chapters (a `chapters` output: its VTT, or a VTT built from its JSON) and the
// storyboard (a `thumbnails` output) that the time range previews on hover.

function vttTime(s: number): string {
  const ms = Math.max(0, Math.round(s * 1000));
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}.${pad(ms % 1000, 3)}`;
}

export interface Chapter {
  start: number;
  end: number;
  title: string;
}

/** The chapters of a JSON chapters output ({chapters: [{start, end, title}]}). */
export function chaptersFromJson(text: string): Chapter[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [];
  }
  const list = isRecord(body) && Array.isArray(body.chapters) ? body.chapters : [];
  return list.flatMap((c: unknown) =>
    isRecord(c) && typeof c.start === 'number' && typeof c.end === 'number'
      ? [{ start: c.start, end: c.end, title: typeof c.title === 'string' ? c.title : '' }]
      : [],
  );
}

export function chaptersVtt(chapters: readonly Chapter[]): string {
  return [
    'WEBVTT',
    '',
    ...chapters.map((c) => `${vttTime(c.start)} --> ${vttTime(c.end)}\n${c.title.replace(/-->/g, '→')}\n`),
  ].join('\n');
}

/** A URL for the chapters track: the VTT output itself, or a blob URL of one built from the JSON output. */
function useChaptersSrc(file: MediaFile | undefined): string | undefined {
  const isVtt = file?.type.startsWith('text/vtt') ?? false;
  const [blob, setBlob] = useState<string | undefined>();
  useEffect(() => {
    if (!file || isVtt) return;
    let url: string | undefined;
    let live = true;
    fetchText(file.url).then(
      (text) => {
        if (!live) return;
        url = URL.createObjectURL(new Blob([chaptersVtt(chaptersFromJson(text))], { type: 'text/vtt' }));
        setBlob(url);
      },
      () => undefined,
    );
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [file, isVtt]);
  return isVtt ? file?.url : blob;
}

const baseType = (type: string) => type.split(';')[0]!.trim();

export function Player({
  media,
  mediaRef,
}: {
  media: Media;
  mediaRef: RefObject<HTMLVideoElement | HTMLAudioElement | null>;
}) {
  const sources = playableSources(media);
  // An adaptive_video package plays instead of the files (hls.js, or the browser's own HLS).
  const adaptive = media.kind === 'audio' ? undefined : adaptiveOf(media);
  const playback = useAdaptive(adaptive, mediaRef);
  // The poster: the video's frame through an image URL at the player's size.
  const original = originalOf(media);
  const poster = useImageUrl(original?.kind === 'video' && original.width ? original.id : undefined, 960, 540, {
    fit: 'inside',
  });
  const subtitles = media.files.filter(
    (f) => f.kind === 'subtitles' && f.status === 'ready' && f.type.startsWith('text/vtt'),
  );
  const chapters = media.files.find((f) => f.kind === 'chapters' && f.status === 'ready');
  const chaptersSrc = useChaptersSrc(chapters);
  const storyboard = media.files.find((f) => f.kind === 'thumbnails' && f.type.startsWith('text/vtt'));
  // Embedded files carry no metadata (the language is in GET /files/{id}); English is assumed.
  const language = (_f: MediaFile) => 'en';
  const tracks = (
    <>
      {subtitles.map((f, i) => (
        <track
          key={f.id}
          kind="subtitles"
          src={f.url}
          srcLang={language(f)}
          label={`Subtitles (${language(f)}${subtitles.length > 1 ? `, ${f.ref ?? f.id}` : ''})`}
          default={i === 0}
        />
      ))}
      {chaptersSrc ? (
        <track key={chaptersSrc} kind="chapters" src={chaptersSrc} srcLang="en" label="Chapters" default />
      ) : null}
      {storyboard ? <track kind="metadata" label="thumbnails" src={storyboard.url} default /> : null}
    </>
  );
  // media-chrome 4.19 gives its captions toggle role="button" with aria-checked, which a button may
  // not carry (axe: aria-allowed-attr); as a switch, the state it announces is valid. Its time
  // display is labelled "playback time" over the visible "0:03 / 0:08" (axe: label-content-name-
  // mismatch); the time range beside it announces the same time, so the display is left to sight.
  const wrap = useRef<HTMLDivElement>(null);
  useEffect(() => {
    wrap.current?.querySelectorAll('media-captions-button').forEach((b) => b.setAttribute('role', 'switch'));
    wrap.current?.querySelectorAll('media-time-display').forEach((d) => {
      d.setAttribute('aria-hidden', 'true');
      d.setAttribute('tabindex', '-1');
    });
  });
  if (sources.length === 0 && !adaptive) return <p className="muted">This media has no playable file yet.</p>;
  const audio = media.kind === 'audio';
  return (
    <div className="player" ref={wrap}>
      <MediaController audio={audio || undefined} defaultSubtitles={subtitles.length > 0 || undefined}>
        {audio ? (
          <audio slot="media" ref={(el) => void (mediaRef.current = el)} preload="metadata" crossOrigin="anonymous">
            {sources.map((s) => (
              <source key={s.id} src={s.url} type={baseType(s.type)} />
            ))}
          </audio>
        ) : (
          <video
            slot="media"
            ref={(el) => void (mediaRef.current = el)}
            preload="metadata"
            poster={poster?.src}
            playsInline
            crossOrigin="anonymous"
            aria-label={media.title ?? 'Video'}
            data-adaptive={adaptive ? 'hls' : undefined}
          >
            {adaptive ? null : sources.map((s) => <source key={s.id} src={s.url} type={baseType(s.type)} />)}
            {tracks}
          </video>
        )}
        {storyboard && !audio ? <MediaPreviewThumbnail slot="preview" /> : null}
        {!audio ? <MediaPreviewChapterDisplay slot="preview" /> : null}
        <MediaPreviewTimeDisplay slot="preview" />
        <MediaControlBar>
          <MediaPlayButton />
          <MediaMuteButton />
          <MediaVolumeRange />
          <MediaTimeRange />
          <MediaTimeDisplay showDuration />
          {subtitles.length > 0 ? <MediaCaptionsButton /> : null}
          {!audio ? <MediaFullscreenButton /> : null}
        </MediaControlBar>
      </MediaController>
      {playback ? <QualityMenu playback={playback} /> : null}
    </div>
  );
}
