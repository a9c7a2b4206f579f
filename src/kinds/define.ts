import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';
import type { Logger } from 'pino';
import type { Static, TSchema } from 'typebox';
import type { Config } from '../config.js';
import type { Outbound } from '../deps.js';
import type { TasksTable } from '../db/schema.js';
import { AppError, type ErrorDetail } from '../errors.js';
import type { ProviderEndpoint } from '../ai/index.js';
import { MediaTransformError, type ProbeResult } from '../media/index.js';
import { policyOf, type RetryPolicy } from '../queue/policies.js';
import type { FileObject, FileRow, MediaObject } from '../shapes/files.js';
import type { TaskKind } from '../shapes/task-kinds.js';
import type { TaskObject, TaskTarget } from '../shapes/tasks.js';
import type { StepChecks, Step } from '../workflows/steps.js';
import type { EngineName, EnginePlan, Engines } from './engines.js';

// What a task kind is and what it gets: each kind is one file that calls defineKind with its
// option schema and its run(). A kind depends on nothing above it: what it needs from the rest
// of mediad (the outbound client, what the task's media looks like, progress, scratch space)
// comes through its context, which the worker pool (workers/pool.ts) supplies.

const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(
  new Ajv({ allErrors: true, coerceTypes: false, useDefaults: true, removeAdditional: false, strict: false }),
);

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
  /** The file's own metadata (a track's language and the engines that made it). */
  metadata?: Record<string, unknown>;
  /**
   * The entries of a package the file heads (adaptive_video: the master playlist's variant
   * playlists, segments and DASH manifest): files named `entries` in `dir`, stored with it.
   */
  package?: FilePackage;
}

/**
 * A package stored while it is made, so it plays before the task ends (adaptive_video; the worker
 * pool supplies it, services/media/growing-package.ts): entries first, then the head once playable.
 */
export interface PackageWriter {
  /** Stores finished entries of `dir` (segments), each once. */
  putFiles(dir: string, names: readonly string[]): Promise<void>;
  /** Stores or replaces a text entry (a playlist as it grows), after the entries it lists. */
  putEntryText(name: string, text: string): Promise<void>;
  /** Stores the head and makes the task's output file (status processing, event file.playable); once. */
  publish(head: {
    text: string;
    facts: Pick<ProducedFile, 'kind' | 'format' | 'extension' | 'mime' | 'width' | 'height'>;
    ref: string | null;
    metadata: Record<string, unknown>;
  }): Promise<unknown>;
}

/** A package of files in one local directory, stored beside its head file (see storage/keys.ts). */
export interface FilePackage {
  dir: string;
  entries: { name: string; mime: string }[];
}

/** What kind of media a file is, as probing tells it (`file.kind` of inputs). */
export type InputKind = 'video' | 'image' | 'audio';

/** A provider model a kind may call: its endpoint (the outbound client, key, time limit) and model name. */
export interface ProviderModel {
  endpoint: ProviderEndpoint;
  model: string;
}

/** The intelligence engines as a kind sees them (supplied by the worker pool). */
export interface AiPorts {
  /** The configured chat model (vision-capable), null when none is. */
  chat: ProviderModel | null;
  /** The configured speech-to-text model, null when none is. */
  transcribe: ProviderModel | null;
  /** What this process can run (the configuration and the local engines found), for the engine choice. */
  engines(): Promise<Engines>;
  /**
   * The document of the newest completed speech task of this project on this input file, when its
   * output file still exists (subtitles and the other kinds reuse it instead of transcribing again).
   */
  storedSpeech(): Promise<unknown>;
}

/** The task's input file, on local disk. */
export interface KindInput {
  path: string;
  file: FileRow;
  probe: ProbeResult;
}

/** The task, its input's media and its input file, as the API shows them. */
export interface TaskSubject {
  task: TaskObject;
  media: MediaObject | null;
  file: FileObject | null;
}

export interface KindContext<O> {
  task: TasksTable;
  /** The options, checked against the kind's schema. */
  options: O;
  target: TaskTarget;
  signal: AbortSignal;
  /** The task's own scratch directory, removed when it ends. */
  workDir: string;
  /** 0–100; throttled and stored by the worker. */
  progress(percent: number): void;
  /** The writer of a package stored while it is made (null without an input file); made on first call. */
  packageWriter(): PackageWriter | null;
  /** The kind's time limit (its retry policy): what a single FFmpeg run may take at most. */
  timeoutMs: number;
  config: Pick<Config, 'limits' | 'publicUrl'>;
  /** The guarded outbound client (src/net). */
  outbound: Outbound;
  ai: AiPorts;
  log: Logger;
  /** The task, its media and its input file as the API shows them (an http call's body, conditions' subject). */
  describe(): Promise<TaskSubject>;
}

/** A new file of the project made from a local file, as POST /files makes one (ingest). */
export interface IngestedFile {
  path: string;
  media_id?: string;
  /** The new media's title: the source's file name. */
  title?: string;
  metadata?: Record<string, unknown>;
}

/**
 * What a run produces; the worker pool stores it and ends the task in one transaction:
 * - `files`: stored into the input's media (`files[0]` is the task's output, further ones such as
 *   a storyboard sprite join the same media);
 * - `output` (and `results`): no file, the answer goes on the task itself (http, conditions);
 * - `ingested`: a new file and media, as POST /files makes them (ingest);
 * - `steps`: a workflow; the task waits while they run as child tasks.
 */
export type KindResult =
  | { files: ProducedFile[]; results?: unknown; annotate?: MediaAnnotation }
  | { output: unknown; results?: unknown }
  | { ingested: IngestedFile }
  | { steps: Step[] };

/**
 * A summary of an intelligence result written into the input's media, `metadata[key] = value`, in
 * the transaction that completes the task (with a media.updated event), so later workflow steps
 * and automations can test it with conditions (`metadata.nsfw.detected`).
 */
export interface MediaAnnotation {
  key: string;
  value: Record<string, unknown>;
}

/** What checks at creation may look up (supplied by services/media/tasks.ts). */
export interface AdmitPorts {
  mediaExists(projectId: string, mediaId: string): Promise<boolean>;
}

/** Why a step's kind cannot run with these engines (each problem with its path); used by workflows. */
export type StepRefusals = (kind: TaskKind, options: Record<string, unknown>, at: string) => Promise<ErrorDetail[]>;

interface KindCommon<S extends TSchema> {
  kind: TaskKind;
  /** TypeBox schema of the kind's own options (sent flat beside kind, url, file_id...). */
  options: S;
  /** Cross-field checks at creation (a codec the container cannot hold): each problem is a 400 detail. */
  problems?(options: Static<S>, checks: StepChecks): ErrorDetail[];
  /** Checks at creation that need the project's data (an ingest into another project's media is a 404). */
  admit?(ports: AdmitPorts, projectId: string, options: Static<S>): Promise<void>;
  /**
   * Which engines the kind would run with: checked at creation (a refusal is a 422
   * engine_unavailable naming what to set or install) and again when it runs.
   */
  engines?(options: Static<S>, engines: Engines): EnginePlan<EngineName>;
  /**
   * What this machine lacks for these options (an encoder this FFmpeg was built without), each
   * problem with its field: refused as engine_unavailable (422) when the task is created, and when
   * a workflow or an automation names the kind in a step, not only when it runs.
   */
  unavailable?(options: Static<S>): Promise<ErrorDetail[]>;
  /** Engine refusals of the steps a kind contains (workflow), each with its path. */
  stepRefusals?(options: Static<S>, steps: StepRefusals): Promise<ErrorDetail[]>;
  /**
   * The media metadata key its result writes (`nsfw`: `metadata.nsfw.detected`), so a dry run knows
   * which later conditions depend on it; run() may annotate only this key.
   */
  annotates?: string;
}

/** A kind that works on a file of the project (given by file_id, or a url stored first). */
interface FileKind<S extends TSchema> extends KindCommon<S> {
  needsInputFile: true;
  /**
   * The kinds of input the kind takes (absent: any). A file_id of another kind is a 400 at
   * creation; a url input turns out its kind only when stored, and then fails with invalid_for_input.
   */
  inputKinds?: readonly InputKind[];
  /** Checks that need the input (an audio task on a file without audio); throws a permanent error. */
  check?(options: Static<S>, input: KindInput): void;
  /**
   * Checks at creation against a file_id's stored facts (a rung above its height): options that are
   * well-formed but that this source cannot satisfy, each problem a detail of a 422 invalid_for_source.
   */
  fileProblems?(options: Static<S>, file: { kind: string; width: number | null; height: number | null }): ErrorDetail[];
  run(ctx: KindContext<Static<S>>, input: KindInput): Promise<KindResult>;
}

/** A kind that takes a url and makes the file itself (ingest), or needs no file (http). */
interface UrlKind<S extends TSchema> extends KindCommon<S> {
  needsInputFile: false;
  /** `url` is this kind's own option (the address an http task calls), not an input to fetch. */
  urlIsOption?: boolean;
  run(ctx: KindContext<Static<S>>): Promise<KindResult>;
}

export type KindDefinition<S extends TSchema> = FileKind<S> | UrlKind<S>;

/** The run context without the options, which the kind checks and types itself. */
export type RunContext = Omit<KindContext<unknown>, 'options'>;

/** A kind as the registry and the worker pool see it, whatever its options. */
export interface Kind {
  kind: TaskKind;
  options: TSchema;
  validate: ValidateFunction;
  policy: RetryPolicy;
  needsInputFile: boolean;
  urlIsOption: boolean;
  /** The input kinds it takes; null: any. */
  inputKinds: readonly InputKind[] | null;
  /** Whether it runs on intelligence engines (an engine choice is made for it). */
  usesEngines: boolean;
  /** The media metadata key its result writes, or null. */
  annotates: string | null;
  problems(options: unknown, checks: StepChecks): ErrorDetail[];
  /** Problems of these options with the given input file's stored facts (none for most kinds). */
  fileProblems(options: unknown, file: { kind: string; width: number | null; height: number | null }): ErrorDetail[];
  admit(ports: AdmitPorts, projectId: string, options: unknown): Promise<void>;
  /** The engine these options run with here (null: the kind uses no intelligence engine), e.g. for `mediad doctor`. */
  plan(options: unknown, engines: Engines): EnginePlan<EngineName> | null;
  /** Problems that make it unable to run here (engine_unavailable): its own engine, or its steps'. */
  refusals(options: unknown, engines: () => Promise<Engines>, steps: StepRefusals): Promise<ErrorDetail[]>;
  run(ctx: RunContext, options: unknown, input: KindInput | null): Promise<KindResult>;
}

export function defineKind<S extends TSchema>(def: KindDefinition<S>): Kind {
  const validate = ajv.compile<Static<S>>(def.options);
  // Options reach a kind only through this check, so they have the schema's type in the kind.
  // Stored tasks are checked again when they run: a task whose options an older mediad accepted
  // fails clearly instead of running with options the kind does not understand.
  const checked = (options: unknown): Static<S> => {
    if (validate(options)) return options;
    throw new AppError(
      'validation_failed',
      `the task's options do not fit kind ${def.kind}: ${ajv.errorsText(validate.errors)}`,
    );
  };
  return {
    kind: def.kind,
    options: def.options,
    validate,
    policy: policyOf(def.kind),
    needsInputFile: def.needsInputFile,
    urlIsOption: !def.needsInputFile && def.urlIsOption === true,
    inputKinds: def.needsInputFile ? (def.inputKinds ?? null) : null,
    usesEngines: def.engines !== undefined,
    annotates: def.annotates ?? null,
    problems: (options, checks) => (validate(options) ? (def.problems?.(options, checks) ?? []) : []),
    fileProblems: (options, file) =>
      def.needsInputFile && def.fileProblems && validate(options) ? def.fileProblems(options, file) : [],
    admit: async (ports, projectId, options) => {
      if (def.admit) await def.admit(ports, projectId, checked(options));
    },
    plan: (options, engines) => (def.engines ? def.engines(checked(options), engines) : null),
    refusals: async (options, engines, steps) => {
      const o = checked(options);
      const out: ErrorDetail[] = def.stepRefusals ? await def.stepRefusals(o, steps) : [];
      if (def.unavailable) out.push(...(await def.unavailable(o)));
      if (def.engines) {
        const plan = def.engines(o, await engines());
        if ('refused' in plan) out.push({ field: engineField(o), message: plan.refused });
      }
      return out;
    },
    run: async (ctx, options, input) => {
      const o = checked(options);
      if (!def.needsInputFile) return def.run({ ...ctx, options: o });
      if (!input) throw new Error(`kind ${def.kind} runs on an input file and got none`);
      if (def.inputKinds && !def.inputKinds.includes(input.probe.kind))
        throw new MediaTransformError(
          'invalid_for_input',
          inputKindMessage(def.kind, def.inputKinds, input.probe.kind),
        );
      def.check?.(o, input);
      const result = await def.run({ ...ctx, options: o }, input);
      if ('annotate' in result && result.annotate && result.annotate.key !== def.annotates)
        throw new Error(`kind ${def.kind} annotated metadata.${result.annotate.key}, not its declared key`);
      return result;
    },
  };
}

/** A refusal names the `engine` option when one was asked for, else the kind. */
function engineField(options: unknown): string {
  return options !== null && typeof options === 'object' && 'engine' in options ? 'engine' : 'kind';
}

const article = (word: string) => (/^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`);

/** "speech takes audio or video; this file is an image". */
export function inputKindMessage(kind: string, accepted: readonly string[], actual: string): string {
  const list = accepted.length > 1 ? `${accepted.slice(0, -1).join(', ')} or ${accepted.at(-1)}` : accepted[0];
  return `${kind} takes ${list}; this file is ${article(actual)}`;
}
