import { isTaskKind, TASK_KINDS, type TaskKind } from '../shapes/task-kinds.js';
import { stepKind, type StepChecks } from '../workflows/steps.js';
import type { ErrorDetail } from '../errors.js';
import { inputKindMessage, type Kind, type StepRefusals } from './define.js';
import type { EngineName, EnginePlan, Engines } from './engines.js';
import { audioKind } from './audio.js';
import { chaptersKind } from './chapters.js';
import { conditionsKind } from './conditions.js';
import { descriptionKind } from './description.js';
import { httpKind } from './http.js';
import { imageKind } from './image.js';
import { ingestKind } from './ingest.js';
import { nsfwKind } from './nsfw.js';
import { outlineKind } from './outline.js';
import { promptKind } from './prompt.js';
import { speechKind } from './speech.js';
import { subtitlesKind } from './subtitles.js';
import { thumbnailsKind } from './thumbnails.js';
import { videoKind } from './video.js';
import { workflowKind } from './workflow.js';
import { adaptiveVideoKind } from './adaptive-video.js';

// Kind -> its definition. A Record over the API's catalogue (shapes/task-kinds.ts), so a kind
// listed there without an implementation here does not compile; each entry is checked once at load
// to define the kind it is filed under.
const registry: Record<TaskKind, Kind> = {
  ingest: ingestKind,
  video: videoKind,
  image: imageKind,
  audio: audioKind,
  thumbnails: thumbnailsKind,
  speech: speechKind,
  subtitles: subtitlesKind,
  chapters: chaptersKind,
  nsfw: nsfwKind,
  description: descriptionKind,
  outline: outlineKind,
  prompt: promptKind,
  workflow: workflowKind,
  conditions: conditionsKind,
  http: httpKind,
  adaptive_video: adaptiveVideoKind,
};
const KINDS: Kind[] = Object.values(registry);
for (const k of TASK_KINDS) {
  if (registry[k].kind !== k) throw new Error(`kind ${k} is filed with the definition of ${registry[k].kind}`);
}

/** The definition of a kind named by a client or a stored row: undefined when it is not a kind. */
export function kindEntry(kind: string): Kind | undefined {
  return isTaskKind(kind) ? registry[kind] : undefined;
}

/** The definition of one of the API's kinds. */
export function kindOf(kind: TaskKind): Kind {
  return registry[kind];
}

/** How workflow steps are checked: by their kind's schema and rules (a workflow's steps by this same lookup). */
export const stepChecks: StepChecks = (kind) => {
  const k = registry[kind];
  return { validate: k.validate, problems: (options) => k.problems(options, stepChecks) };
};

/**
 * Why a kind (with its options) cannot run with the engines here, each problem with its field;
 * a workflow's steps are looked up the same way, with their paths (`workflow[1].next[0].engine`).
 * `engines` is called only when some kind needs an engine (the local ones are looked for once).
 */
export function engineRefusals(kind: Kind, options: unknown, engines: () => Promise<Engines>): Promise<ErrorDetail[]> {
  const steps: StepRefusals = async (stepKind, stepOptions, at) => {
    const k = registry[stepKind];
    const found = await k.refusals(stepOptions, engines, steps);
    return found.map((d) => ({ field: `${at}.${d.field}`, message: d.message }));
  };
  return kind.refusals(options, engines, steps);
}

const accepts = (kind: Kind, fileKind: string) =>
  kind.inputKinds === null || kind.inputKinds.some((k) => k === fileKind);

/**
 * A file_id of a kind the task cannot take (speech on an image) is known at creation: the task's
 * own kind, or for a workflow its top-level steps, which run on this very file (steps under a
 * conditions step or another step's `next` may never run on it).
 */
export function inputKindProblems(kind: Kind, options: unknown, fileKind: string): ErrorDetail[] {
  if (!accepts(kind, fileKind))
    return [{ field: 'file_id', message: inputKindMessage(kind.kind, kind.inputKinds ?? [], fileKind) }];
  const workflow = options && typeof options === 'object' && 'workflow' in options ? options.workflow : undefined;
  if (kind.kind !== 'workflow' || !Array.isArray(workflow)) return [];
  const out: ErrorDetail[] = [];
  workflow.forEach((step: unknown, i) => {
    const name = step && typeof step === 'object' && 'kind' in step && typeof step.kind === 'string' ? step.kind : '';
    const k = registry[stepKind(name) ?? 'workflow'];
    if (k.kind !== 'workflow' && !accepts(k, fileKind))
      out.push({
        field: 'file_id',
        message: `workflow[${i}]: ${inputKindMessage(k.kind, k.inputKinds ?? [], fileKind)}`,
      });
  });
  return out;
}

/** Options that make each kind's default engine choice checkable (prompt's own text is required). */
const SAMPLE_OPTIONS: Partial<Record<TaskKind, object>> = { prompt: { prompt: 'sample' } };

/** Kind → the engine it runs with by default here, or why it cannot run (intelligence kinds only). */
export function defaultEngines(engines: Engines): Partial<Record<TaskKind, EnginePlan<EngineName>>> {
  const out: Partial<Record<TaskKind, EnginePlan<EngineName>>> = {};
  for (const k of KINDS) {
    const plan = k.plan(SAMPLE_OPTIONS[k.kind] ?? {}, engines);
    if (plan) out[k.kind] = plan;
  }
  return out;
}
