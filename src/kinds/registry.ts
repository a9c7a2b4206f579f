import { isTaskKind, TASK_KINDS, type TaskKind } from '../shapes/task-kinds.js';
import type { StepChecks } from '../workflows/steps.js';
import type { Kind } from './define.js';
import { audioKind } from './audio.js';
import { conditionsKind } from './conditions.js';
import { httpKind } from './http.js';
import { imageKind } from './image.js';
import { ingestKind } from './ingest.js';
import { thumbnailsKind } from './thumbnails.js';
import { videoKind } from './video.js';
import { workflowKind } from './workflow.js';

// Kind -> its definition, checked once at load: no kind twice.
const KINDS: Kind[] = [
  ingestKind,
  videoKind,
  imageKind,
  audioKind,
  thumbnailsKind,
  workflowKind,
  conditionsKind,
  httpKind,
];

const registry = new Map<TaskKind, Kind>();
for (const k of KINDS) {
  if (registry.has(k.kind)) throw new Error(`two definitions of kind ${k.kind}`);
  registry.set(k.kind, k);
}

export function kindEntry(kind: string): Kind | undefined {
  return isTaskKind(kind) ? registry.get(kind) : undefined;
}

export function implementedKinds(): TaskKind[] {
  return TASK_KINDS.filter((k) => registry.has(k));
}

/** How workflow steps are checked: by their kind's schema and rules (a workflow's steps by this same lookup). */
export const stepChecks: StepChecks = (kind) => {
  const k = registry.get(kind);
  return k ? { validate: k.validate, problems: (options) => k.problems(options, stepChecks) } : undefined;
};
