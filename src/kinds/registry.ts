import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { TASK_KINDS, type KindProcessor, type TaskKind } from './types.js';
import { audioKind } from './audio.js';
import { conditionsKind } from './conditions.js';
import { httpKind } from './http.js';
import { workflowKind } from './workflow.js';
import { imageKind } from './image.js';
import { ingestKind } from './ingest.js';
import { thumbnailsKind } from './thumbnails.js';
import { videoKind } from './video.js';

const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

// Kind -> processor, checked once at load: every entry is a known kind, no kind twice.
const PROCESSORS: KindProcessor[] = [ingestKind, videoKind, imageKind, audioKind, thumbnailsKind, workflowKind, conditionsKind, httpKind];

const registry = new Map<TaskKind, { processor: KindProcessor; validate: ValidateFunction }>();
const ajv = addFormats(new Ajv({ allErrors: true, coerceTypes: false, useDefaults: true, removeAdditional: false, strict: false }));
for (const p of PROCESSORS) {
  if (!TASK_KINDS.includes(p.kind)) throw new Error(`processor for unknown kind ${p.kind}`);
  if (registry.has(p.kind)) throw new Error(`two processors for kind ${p.kind}`);
  registry.set(p.kind, { processor: p, validate: ajv.compile(p.options) });
}

export function kindEntry(kind: string) {
  return registry.get(kind as TaskKind);
}

export function implementedKinds(): TaskKind[] {
  return [...registry.keys()];
}
