import { createHash, timingSafeEqual } from 'node:crypto';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import type { ImageDerivativesTable, ImageUrlSettingsTable } from '../../db/schema.js';
import type { ImageFormat, ImageUrlRender, ImageUrlResult } from '../../media/index.js';
import { imageUrlSettings, recentImageUrlSettings, signImagePath, verifyingKeys } from './image-url-keys.js';
import { formatImageUrlOptions, parseImageUrlOptions, withPreset, type ImageUrlOptions } from './image-url-options.js';
import {
  findDerivative,
  flushTouches,
  Semaphore,
  SingleFlight,
  storeDerivative,
  touchDerivative,
} from './image-url-cache.js';
import type { RateLimitStore } from '../../ratelimit/stores.js';
import { decide, windowIndex } from '../../ratelimit/window.js';
import { computeImage, type SourceFile } from './image-url-compute.js';
import { getPresetOptions } from './image-presets.js';
import { compiledOnce } from '../../db/compiled.js';

// Answers /img/{project}/{signature}/{options}/{file_id}[.ext] (docs/image-urls.md): checks the
// signature before anything else, then the options, then finds the cached result or makes it.

export { IMAGE_URL_PREFIX } from './image-url-paths.js';
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;
const FILE_SEGMENT = /^(file_[A-Za-z0-9]+)(?:\.(jpg|jpeg|png|webp|avif|gif))?$/;
const STATIC_FORMATS: readonly ImageFormat[] = ['jpeg', 'png', 'webp', 'avif', 'gif'];

export interface ImageUrlTarget {
  projectId: string;
  signature: string;
  options: string;
  file: string;
}

/** The four segments after /img/, or null (a 404) when the path has another shape. */
export function splitImagePath(path: string): ImageUrlTarget | null {
  const parts = path.split('/');
  if (parts.length !== 4 || parts.some((p) => p === '')) return null;
  const [projectId, signature, options, file] = parts;
  return { projectId: projectId!, signature: signature!, options: options!, file: file! };
}

/** What is signed: the path after the signature segment, from its '/'. */
export const signedPathOf = (t: Pick<ImageUrlTarget, 'options' | 'file'>): string => `/${t.options}/${t.file}`;

const notFound = () => new AppError('not_found', 'no image at this address');
const badSignature = (why: string) =>
  new AppError(
    'signature_invalid',
    `${why}; sign the path after the signature with the project's image-URL key, or ask POST /image-urls`,
  );

function checkSignature(keys: string[], target: ImageUrlTarget): void {
  if (!SIGNATURE.test(target.signature)) throw badSignature('the signature must be 43 base64url characters');
  const given = Buffer.from(target.signature);
  const path = signedPathOf(target);
  for (const key of keys) {
    const expected = Buffer.from(signImagePath(key, path));
    if (timingSafeEqual(expected, given)) return;
  }
  throw badSignature('the signature does not match this URL');
}

export interface ResolvedImage {
  /** The cache id: the project, the file and every option as rendered (format resolved). */
  id: string;
  etag: string;
  projectId: string;
  fileId: string;
  signed: boolean;
  /** format:auto: the answer depends on Accept. */
  varyAccept: boolean;
  render: ImageUrlRender;
}

export type ImageAnswer =
  | { kind: 'cached'; image: ResolvedImage; row: ImageDerivativesTable }
  | { kind: 'not_modified'; image: ResolvedImage }
  | { kind: 'computed'; image: ResolvedImage; result: ImageUrlResult; shared: boolean; timing?: MissTiming };

/** Where a miss's time went in this process, in ms: waiting for a computation slot, and the computation. */
export interface MissTiming {
  waitMs: number;
  renderMs: number;
}

function acceptFormat(accept: string | undefined, sourceFormat: string | null): ImageFormat {
  const a = (accept ?? '').toLowerCase();
  if (a.includes('image/avif')) return 'avif';
  if (a.includes('image/webp')) return 'webp';
  return sourceFormat === 'png' || sourceFormat === 'gif' ? 'png' : 'jpeg';
}

const optionError = (field: string, message: string) =>
  new AppError('validation_failed', `image option ${field}: ${message}`, { details: [{ field, message }] });

/** Takes a result's lock across processes and resolves with its release (PostgreSQL advisory locks). */
export type ResultLock = (id: string) => Promise<() => Promise<void>>;

/** What several processes share: where misses are counted, and the lock of a result being made. */
export interface ImageUrlShared {
  /** The API's rate-limit store: Redis or PostgreSQL (every process counts in one place) or this process's memory. */
  misses: RateLimitStore;
  /** null: one process (SQLite), where the in-process single flight is enough. */
  lock: ResultLock | null;
}

/** What a computation hands its waiters: the result, or the row another process stored meanwhile. */
/** A source file's row, read by each miss (its SQL compiled once, db/compiled.ts). */
const sourceRow = compiledOnce(
  (db, projectId: string, fileId: string) =>
    db
      .selectFrom('files')
      .select(['id', 'kind', 'format', 'width', 'height', 'duration', 'blob_key', 'probe'])
      .where('project_id', '=', projectId)
      .where('id', '=', fileId),
  2,
);

type Made =
  { kind: 'result'; result: ImageUrlResult; timing: MissTiming } | { kind: 'row'; row: ImageDerivativesTable };

export class ImageUrlService {
  private readonly flights = new SingleFlight<Made>();
  private readonly slots: Semaphore;
  /** Results sent but not stored yet: a request in between gets them from here, not a second computation. */
  private readonly storing = new Map<string, ImageUrlResult>();
  private lastMissWarning = 0;
  /** URLs whose signature (or preset) held, by the settings row they were checked with. */
  private readonly checked = new WeakMap<
    ImageUrlSettingsTable,
    Map<string, { options: ImageUrlOptions; signed: boolean }>
  >();
  /**
   * Source rows by project and file id. A file never gets other bytes, so its row stays true
   * until the file is deleted; its results are deleted with it, so a hit may trust this copy and a
   * miss reads the row again before any work.
   */
  private readonly sources = new Map<string, { file: SourceFile; frames: number }>();

  constructor(
    private readonly deps: Deps,
    private readonly shared: ImageUrlShared,
  ) {
    this.slots = new Semaphore(deps.config.imageUrls.concurrency);
  }

  /** A cached row whose blob is gone (removed by hand, a crash mid-eviction): the next request makes it again. */
  async forget(id: string): Promise<void> {
    await this.deps.db.deleteFrom('image_derivatives').where('id', '=', id).execute();
  }

  /** Writes what is pending (the hits' last-use times). */
  async close(): Promise<void> {
    await flushTouches(this.deps);
  }

  /** The settings of a project that exists (made on its first image URL), or a 404. */
  private async settings(projectId: string): Promise<ImageUrlSettingsTable> {
    const row = await recentImageUrlSettings(this.deps, projectId);
    if (row) return row;
    const project = await this.deps.db
      .selectFrom('projects')
      .select('id')
      .where('id', '=', projectId)
      .where('deleted', 'is', null)
      .executeTakeFirst();
    if (!project) throw notFound();
    return imageUrlSettings(this.deps, projectId);
  }

  /** The options of a URL whose signature holds (or of an allowed unsigned preset URL); nothing read yet. */
  private async options(target: ImageUrlTarget): Promise<{ options: ImageUrlOptions; signed: boolean }> {
    const settings = await this.settings(target.projectId);
    // A URL checked against this copy of the settings (at most 5 s old) is not checked again:
    // a hit then costs no HMAC and no parse.
    let checked = this.checked.get(settings);
    if (!checked) this.checked.set(settings, (checked = new Map()));
    const key = `${target.signature}/${target.options}/${target.file}`;
    let found = checked.get(key);
    if (!found) {
      found = this.check(settings, target);
      if (checked.size < 10_000) checked.set(key, found);
    }
    return found;
  }

  private check(
    settings: ImageUrlSettingsTable,
    target: ImageUrlTarget,
  ): { options: ImageUrlOptions; signed: boolean } {
    const signed = target.signature !== '_';
    if (signed) {
      checkSignature(verifyingKeys(this.deps, settings), target);
      return { options: parseImageUrlOptions(target.options), signed };
    }
    if (settings.allow_unsigned_presets !== 1)
      throw badSignature('this project takes signed image URLs only (unsigned URLs of presets are off)');
    let parsed: ImageUrlOptions | null;
    try {
      parsed = parseImageUrlOptions(target.options);
    } catch {
      parsed = null;
    }
    if (!parsed || parsed.preset === undefined || Object.keys(parsed).length !== 1)
      throw badSignature('an unsigned image URL may name a preset only (preset:name)');
    return { options: parsed, signed };
  }

  /** Answers one image URL: checks in order signature, options, limits, the file; then the cache or a computation. */
  async answer(target: ImageUrlTarget, headers: { accept?: string; ifNoneMatch?: string }): Promise<ImageAnswer> {
    const checked = await this.options(target);
    const signed = checked.signed;
    let options = checked.options;
    if (options.preset !== undefined)
      options = withPreset(await getPresetOptions(this.deps, target.projectId, options.preset), options);
    const m = FILE_SEGMENT.exec(target.file);
    if (!m) throw notFound();
    const ext = m[2] === 'jpg' ? 'jpeg' : m[2];
    if (ext !== undefined && options.format !== undefined && options.format !== ext)
      throw optionError('format', `${options.format} differs from the extension .${m[2]}`);
    if (ext !== undefined)
      options = { ...options, format: ext === 'jpeg' ? 'jpeg' : (STATIC_FORMATS.find((f) => f === ext) ?? 'jpeg') };
    const render = this.outputLimits(options);
    const source = await this.source(target.projectId, m[1]!, false);
    if (!source) throw notFound();
    const { file } = source;
    const frames = this.sourceLimits(file, source.frames, options);
    render.format =
      options.format === 'auto'
        ? acceptFormat(headers.accept, file.format)
        : (options.format ?? STATIC_FORMATS.find((f) => f === file.format) ?? 'jpeg');
    // An animated source keeps its frames when the output can hold them and no time picks one.
    render.animated = frames > 1 && options.time === undefined && (render.format === 'gif' || render.format === 'webp');
    const id = createHash('sha256')
      .update(
        JSON.stringify([target.projectId, file.id, formatImageUrlOptions({ ...options, preset: undefined }), render]),
      )
      .digest('base64url')
      .slice(0, 32);
    const image: ResolvedImage = {
      id,
      etag: `"${id}"`,
      projectId: target.projectId,
      fileId: file.id,
      signed,
      varyAccept: options.format === 'auto',
      render,
    };
    if (
      headers.ifNoneMatch !== undefined &&
      headers.ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === image.etag)
    )
      return { kind: 'not_modified', image };
    const row = await findDerivative(this.deps, id);
    if (row) {
      touchDerivative(this.deps, row);
      return { kind: 'cached', image, row };
    }
    const sent = this.storing.get(id);
    if (sent) return { kind: 'computed', image, result: sent, shared: true };
    // A miss: the file must still be there (its row read again if it came from memory: the file
    // may have been deleted since).
    if (!source.read && !(await this.source(target.projectId, file.id, true))) throw notFound();
    // Counted inside the flight: a request that joins a computation already running in this
    // process costs nothing more (and shares its refusal).
    const flight = this.flights.run(id, async () => {
      await this.countMiss(target.projectId);
      return this.make(id, target.projectId, file, render, options.time, frames);
    });
    const made = await flight.promise;
    // Made by another process while this one waited for the lock: served from the cache.
    if (made.kind === 'row') return { kind: 'cached', image, row: made.row };
    return { kind: 'computed', image, result: made.result, shared: flight.shared, timing: made.timing };
  }

  /**
   * Counts a miss against the project's limit in the API's rate-limit store (shared by every
   * process on Redis or PostgreSQL), 429 past it. Fails open, as the API's limiter does.
   */
  private async countMiss(projectId: string): Promise<void> {
    const limit = this.deps.config.imageUrls.missesPerMinute;
    if (limit === 0) return;
    const now = this.deps.clock.now().getTime();
    let counts;
    try {
      counts = await this.shared.misses.hit(`image-miss:${projectId}`, windowIndex(now));
    } catch (err) {
      if (now - this.lastMissWarning > 30_000) {
        this.lastMissWarning = now;
        this.deps.log.warn({ err }, 'image URLs: the miss counter failed; misses are not limited until it recovers');
      }
      return;
    }
    const d = decide(limit, now, counts);
    if (!d.allowed)
      throw new AppError(
        'rate_limited',
        `this project made more than ${limit} new images this minute (MEDIAD_IMAGE_URL_MISSES_PER_MINUTE); cached ones are still served`,
        { headers: { 'retry-after': String(d.retryAfterSeconds ?? 1) } },
      );
  }

  /**
   * One computation (its identical requests in this process wait for it): with several processes,
   * under the result's lock, and after looking in the cache again once the lock is held (the
   * process that held it before may have stored it). The answer goes out first; the result is
   * stored after, and only then is the lock let go.
   */
  private async make(
    id: string,
    projectId: string,
    file: SourceFile,
    render: ImageUrlRender,
    time: number | undefined,
    frames: number,
  ): Promise<Made> {
    let release: (() => Promise<void>) | null = null;
    if (this.shared.lock) {
      try {
        release = await this.shared.lock(id);
      } catch (err) {
        // No lock within its timeout (or the database away): computed anyway, as with one process.
        this.deps.log.warn({ err, image: id }, 'image URLs: no lock for this result; computing without it');
      }
    }
    const unlock = () =>
      release?.().catch((err: unknown) => this.deps.log.warn({ err, image: id }, 'image URLs: lock not released'));
    let handedOff = false;
    try {
      if (release) {
        const row = await findDerivative(this.deps, id);
        if (row) return { kind: 'row', row };
      }
      const queued = performance.now();
      let started = queued;
      const result = await this.slots.use(() => {
        started = performance.now();
        return computeImage(this.deps, file, render, time, frames);
      });
      const timing = { waitMs: started - queued, renderMs: performance.now() - started };
      this.storing.set(id, result);
      handedOff = true;
      // After this turn of the event loop, when the answer has been written: the store's SQLite
      // writes (synchronous on this thread) must not delay the bytes the client waits for.
      setImmediate(() => {
        storeDerivative(this.deps, { id, projectId, fileId: file.id, type: result.mime, data: result.data })
          .catch((err: unknown) => this.deps.log.warn({ err, image: id }, 'image cache: result not stored'))
          .finally(() => {
            this.storing.delete(id);
            void unlock();
          });
      });
      return { kind: 'result', result, timing };
    } finally {
      if (!handedOff) await unlock();
    }
  }

  /** Output size limits (after dpr), checked from the options alone. */
  private outputLimits(o: ImageUrlOptions): ImageUrlRender {
    const limits = this.deps.config.imageUrls;
    const dpr = o.dpr ?? 1;
    const width = o.width !== undefined ? Math.round(o.width * dpr) : undefined;
    const height = o.height !== undefined ? Math.round(o.height * dpr) : undefined;
    if (width !== undefined && width > limits.maxWidth)
      throw optionError(
        'width',
        `width × dpr (${width}) is over the ${limits.maxWidth} px limit (MEDIAD_IMAGE_URL_MAX_WIDTH)`,
      );
    if (height !== undefined && height > limits.maxHeight)
      throw optionError(
        'height',
        `height × dpr (${height}) is over the ${limits.maxHeight} px limit (MEDIAD_IMAGE_URL_MAX_HEIGHT)`,
      );
    if (width !== undefined && height !== undefined && width * height > limits.maxPixels)
      throw optionError(
        'width',
        `width × height (${width * height} px) is over the ${limits.maxPixels} px limit (MEDIAD_IMAGE_URL_MAX_PIXELS)`,
      );
    return {
      width,
      height,
      fit: o.fit ?? 'cover',
      position: o.position ?? 'center',
      format: 'jpeg',
      quality: o.quality ?? 80,
      background: `#${o.background ?? 'ffffff'}`,
      blur: o.blur,
      sharpen: o.sharpen,
      rotate: o.rotate ?? 0,
      enlarge: o.enlarge === 1,
      animated: false,
    };
  }

  /** The file's row and its frame count (from the stored probe), from memory unless `fresh`; undefined when it is gone. */
  private async source(
    projectId: string,
    fileId: string,
    fresh: boolean,
  ): Promise<{ file: SourceFile; frames: number; read: boolean } | undefined> {
    const key = `${projectId}/${fileId}`;
    const known = fresh ? undefined : this.sources.get(key);
    if (known) return { ...known, read: false };
    const [file] = await sourceRow({ db: this.deps.db, reader: null }, projectId, fileId);
    if (!file) {
      this.sources.delete(key);
      return undefined;
    }
    let frames = 1;
    try {
      const probe: unknown = file.probe ? JSON.parse(file.probe) : null;
      if (probe && typeof probe === 'object' && 'frames' in probe && typeof probe.frames === 'number')
        frames = probe.frames;
    } catch {
      frames = 1;
    }
    const entry = { file: { ...file, probe: null }, frames };
    if (this.sources.size >= 10_000) this.sources.delete(this.sources.keys().next().value!);
    this.sources.set(key, entry);
    return { ...entry, read: true };
  }

  /** Kind, source pixels and time, from the stored probe (no decoding); returns the frames a computation reads. */
  private sourceLimits(file: SourceFile, frames: number, o: ImageUrlOptions): number {
    if (file.kind !== 'image' && file.kind !== 'video')
      throw new AppError(
        'unsupported_media_type',
        `image URLs are made from images and videos; this file is ${file.kind}`,
      );
    const pixels = (file.width ?? 0) * (file.height ?? 0) * (file.kind === 'image' ? frames : 1);
    const { maxPixels, maxFrames } = this.deps.config.limits;
    if (pixels > maxPixels || frames > maxFrames)
      throw new AppError(
        'media_limit_exceeded',
        `the source is larger than the pixel limit (MEDIAD_MAX_PIXELS ${maxPixels})`,
      );
    if (file.kind === 'video' && o.time !== undefined && file.duration !== null && o.time >= file.duration)
      throw new AppError(
        'invalid_for_source',
        `image option time: ${o.time} s is past the end of the video (${file.duration} s)`,
        {
          details: [{ field: 'time', message: `past the end of the video (${file.duration} s)` }],
        },
      );
    return file.kind === 'image' ? frames : 1;
  }
}
