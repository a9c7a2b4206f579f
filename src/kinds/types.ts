import type { TSchema } from 'typebox';
import type { Deps } from '../deps.js';
import type { TasksTable } from '../db/schema.js';
import type { ProbeResult } from '../media/index.js';
import type { FileRow } from '../services/representations.js';

/** SPEC 4.7: the closed catalogue of task kinds. */
export const TASK_KINDS = ['ingest', 'video', 'image', 'audio', 'chapters', 'subtitles', 'thumbnails', 'nsfw', 'speech', 'description', 'outline', 'prompt', 'workflow', 'conditions', 'http'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

/** Attempts, backoff and timeout per kind: data, not code (PeerTube's job table). */
export interface RetryPolicy {
  maxAttempts: number;
  /** First retry waits this long; each later one doubles it. */
  backoffMs: number;
  timeoutMs: number;
}

export interface TaskTarget {
  folder?: string;
  filename?: string;
  ref?: string;
}

/** A finished output on local disk, not yet stored. */
export interface ProducedFile {
  path: string;
  kind: string;
  format: string;
  extension: string;
  mime: string;
  width?: number;
  height?: number;
  duration?: number;
  /** The full probe when the kind made one (kept on the row so later tasks need not probe again). */
  probe?: ProbeResult;
  /** Overrides the task's ref and default filename (secondary outputs such as a storyboard sprite). */
  ref?: string | null;
  filename?: string;
}

export interface KindInput {
  path: string;
  file: FileRow;
  probe: ProbeResult;
}

export interface TaskContext {
  deps: Deps;
  task: TasksTable;
  options: Record<string, unknown>;
  target: TaskTarget;
  signal: AbortSignal;
  workDir: string;
  /** 0–100; throttled and stored by the worker. */
  progress(percent: number): void;
}

/**
 * What a run produces: files to store (`files[0]` is the task's output; further files such
 * as a storyboard sprite join the same media), or `commit`, for kinds that write their own
 * rows and complete the task in one transaction (ingest creates its file that way).
 */
export type KindResult =
  | { files: ProducedFile[] }
  | { commit: () => Promise<void> }
  /** No file: the output (an http call's answer) and results (conditions) go on the task itself. */
  | { output: unknown; results?: unknown };

export interface KindProcessor {
  kind: TaskKind;
  /** TypeBox schema of the kind's own options (sent flat beside kind, url, file_id...). */
  options: TSchema;
  policy: RetryPolicy;
  /** false for kinds that take a URL and make the file themselves (ingest) or need no file (http). */
  needsInputFile: boolean;
  /** `url` is this kind's own option (the address an http task calls), not an input to fetch. */
  urlIsOption?: boolean;
  /** Cross-field checks at creation (a codec the container cannot hold): each problem is a 400 detail. */
  problems?(options: Record<string, unknown>): import('../errors.js').ErrorDetail[];
  /** Checks at creation that need the project's data (an ingest into another project's media is a 404). */
  admit?(deps: Deps, projectId: string, options: Record<string, unknown>): Promise<void>;
  /** Checks that need the input (an audio task on a file without audio); throws a permanent error. */
  check?(options: Record<string, unknown>, input: KindInput): void;
  run(ctx: TaskContext, input: KindInput | null): Promise<KindResult>;
}
