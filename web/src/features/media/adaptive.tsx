import { useEffect, useState, type RefObject } from 'react';
import type { MediaFile } from '../../lib/api/objects';
import { HLS_TYPE } from './files';

// Adaptive streaming in the player: an `adaptive_video` output (an HLS master playlist) is played
// with hls.js (bundled, loaded on demand only for such media; nothing from a CDN), or natively where
// the browser plays HLS itself (Safari). The quality menu lists the rungs hls.js read from the
// master, with "Auto" (hls.js picks by bandwidth).

export interface Rendition {
  index: number;
  height: number;
  bitrate: number;
}

export interface AdaptivePlayback {
  renditions: Rendition[];
  /** -1: automatic. */
  level: number;
  setLevel(level: number): void;
  /** 'native' (the browser plays HLS), 'hls.js', or an error message. */
  engine: string;
}

/** Attaches the package to the video element; returns the renditions and the level control. */
export function useAdaptive(
  file: MediaFile | undefined,
  mediaRef: RefObject<HTMLVideoElement | HTMLAudioElement | null>,
): AdaptivePlayback | null {
  const [renditions, setRenditions] = useState<Rendition[]>([]);
  const [level, setLevelState] = useState(-1);
  const [engine, setEngine] = useState('');
  const [control, setControl] = useState<{ set(level: number): void } | null>(null);
  const url = file?.url;
  useEffect(() => {
    const video = mediaRef.current;
    if (!url || !video) return;
    const native = video.canPlayType(HLS_TYPE) !== '';
    const playNatively = () => {
      video.src = url;
      setEngine('native');
    };
    const unload = () => {
      if (video.getAttribute('src') !== url) return;
      video.removeAttribute('src');
      video.load();
    };
    // hls.js wherever Media Source Extensions exist (it has the rungs for the quality menu); the
    // browser's own HLS where they do not (iPhone Safari).
    if (native && !('MediaSource' in window)) {
      playNatively();
      return unload;
    }
    let live = true;
    let destroy = () => undefined as void;
    import('hls.js').then(
      ({ default: Hls }) => {
        if (!live) return;
        if (!Hls.isSupported()) {
          if (native) playNatively();
          else setEngine('This browser can play neither HLS nor Media Source Extensions.');
          return;
        }
        const hls = new Hls({ capLevelToPlayerSize: false });
        destroy = () => hls.destroy();
        hls.on(Hls.Events.MANIFEST_PARSED, (_e, data) => {
          setRenditions(
            data.levels
              .map((l, index) => ({ index, height: l.height, bitrate: l.bitrate }))
              .sort((a, b) => b.height - a.height),
          );
        });
        hls.on(Hls.Events.ERROR, (_e, data) => {
          if (data.fatal) setEngine(`Playback failed: ${data.details}`);
        });
        hls.loadSource(url);
        hls.attachMedia(video);
        setEngine('hls.js');
        setControl({
          set: (n) => {
            // currentLevel switches now (flushing the buffer); -1 returns to automatic choice.
            hls.currentLevel = n;
          },
        });
      },
      () => setEngine('The HLS player could not be loaded.'),
    );
    return () => {
      live = false;
      destroy();
      unload();
      setControl(null);
      setRenditions([]);
    };
  }, [url, mediaRef]);
  if (!file) return null;
  return {
    renditions,
    level,
    engine,
    setLevel(n) {
      setLevelState(n);
      control?.set(n);
    },
  };
}

/** The quality menu: "Auto" and one entry per rung. */
export function QualityMenu({ playback }: { playback: AdaptivePlayback }) {
  if (playback.renditions.length === 0)
    return playback.engine && !['native', 'hls.js'].includes(playback.engine) ? (
      <p className="muted" role="status">
        {playback.engine}
      </p>
    ) : null;
  return (
    <label className="quality-menu">
      Quality{' '}
      <select value={playback.level} onChange={(e) => playback.setLevel(Number(e.target.value))}>
        <option value={-1}>Auto</option>
        {playback.renditions.map((r) => (
          <option key={r.index} value={r.index}>
            {r.height}p ({Math.round(r.bitrate / 1000)} kbit/s)
          </option>
        ))}
      </select>
    </label>
  );
}
