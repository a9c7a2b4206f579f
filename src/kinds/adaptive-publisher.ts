import fs from 'node:fs/promises';
import path from 'node:path';
import {
  MASTER_PLAYLIST,
  masterVariants,
  normalizeMaster,
  normalizeMediaPlaylist,
  playlistUris,
  segmentDurations,
} from '../media/index.js';
import type { PackageWriter } from './define.js';

// Playable early (docs/tasks.md, "Adaptive streaming"): while the one FFmpeg run encodes the
// ladder, its DASH muxer rewrites every rendition's HLS playlist after each segment (segments are
// written under a temporary name and renamed, playlists replaced whole), so a segment a playlist
// lists is complete. Each pass stores the segments the playlists list, then the playlists as
// EVENT playlists; once every rendition lists a segment the master is stored and the output's
// file row committed (processing): from then on the package plays while the rest is encoded.

const PASS_MS = 500;

export interface PublisherPlan {
  dir: string;
  /** The media playlists FFmpeg writes (media_<n>.m3u8: the rungs, then the audio). */
  playlists: string[];
  segmentSeconds: number;
  /** What the head file is while processing. */
  head(master: string): Parameters<PackageWriter['publish']>[0];
}

/** The media playlists of a ladder of `rungs` video renditions and, with audio, one audio rendition. */
export function mediaPlaylists(rungs: number, audio: boolean): string[] {
  return Array.from({ length: rungs + (audio ? 1 : 0) }, (_, i) => `media_${i}.m3u8`);
}

export class PackagePublisher {
  private readonly sent = new Map<string, string>();
  private playable = false;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();
  private failure: unknown = null;

  constructor(
    private readonly writer: PackageWriter,
    private readonly plan: PublisherPlan,
  ) {}

  /** Passes every PASS_MS until stop(); a pass never overlaps the previous one. `failed`: told of the first failure. */
  start(failed: () => void): void {
    this.timer = setInterval(() => {
      if (this.failure !== null) return;
      this.running = this.running
        .then(() => this.pass())
        .catch((err: unknown) => {
          this.failure ??= err;
          failed();
        });
    }, PASS_MS);
  }

  /** Waits for the pass in flight; a pass that failed (storage) fails the task. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
    if (this.failure !== null) throw this.failure;
  }

  /** One pass: new segments, then changed playlists, then (once) the master and the output row. */
  async pass(): Promise<void> {
    const { dir, playlists, segmentSeconds } = this.plan;
    const texts = await Promise.all(playlists.map((n) => fs.readFile(path.join(dir, n), 'utf8').catch(() => null)));
    if (texts.some((t) => t === null)) return;
    for (const [i, name] of playlists.entries()) {
      const text = texts[i]!;
      await this.writer.putFiles(dir, playlistUris(text));
      const growing = normalizeMediaPlaylist(text, 'EVENT', segmentSeconds);
      if (this.sent.get(name) === growing) continue;
      await this.writer.putEntryText(name, growing);
      this.sent.set(name, growing);
    }
    if (this.playable || !texts.every((t) => segmentDurations(t!).length > 0)) return;
    const master = await fs.readFile(path.join(dir, MASTER_PLAYLIST), 'utf8').catch(() => null);
    if (master === null || masterVariants(master).length === 0) return;
    await this.writer.publish(this.plan.head(normalizeMaster(master)));
    this.playable = true;
  }
}
