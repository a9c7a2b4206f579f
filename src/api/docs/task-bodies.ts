import { kindOf } from '../../kinds/registry.js';
import { TASK_KINDS } from '../../shapes/task-kinds.js';
import { kindConfig } from '../../services/media/tasks-config.js';

// POST /tasks as /openapi.json documents it: one schema per kind (its options, the same JSON
// Schema GET /tasks-config shows and POST /tasks checks, beside the fields every task shares),
// chosen by `kind`, with an example of each. The route itself validates the shared fields and
// leaves the options to the kind (services/media/tasks.ts), so the document is generated from the
// same definitions rather than kept by hand.

type Json = Record<string, unknown>;

/** A file id in examples: the `id` of a file `POST /files` or an upload answered. */
export const EXAMPLE_FILE_ID = 'file_…';
/** A media id in examples (ids in paths and some bodies are letters, digits and _ only). */
export const EXAMPLE_MEDIA_ID = 'med_example';

/** What each kind makes, in a line (docs/tasks.md says more). */
const SUMMARY: Record<string, string> = {
  ingest: 'Fetches `url` into a new file (and media), as POST /files does, in the background.',
  video: 'Transcodes a video: format, codec, size, fit, frame rate, quality, a time range.',
  image: 'An image from an image or a video frame: size, fit, format, quality.',
  audio: 'Extracts or converts audio: format, bitrate, channels, sample rate, a time range.',
  chapters: 'Chapters from scene cuts and pauses in speech, as WebVTT or JSON.',
  subtitles: 'Subtitles from speech, as WebVTT or SRT.',
  thumbnails: 'A storyboard for players: a sprite sheet and a WebVTT track pointing into it.',
  nsfw: 'Scores nudity and sexual content (and violence and gore with a vision chat model).',
  speech: 'A transcript with word times, as JSON.',
  description: 'A title, a description and tags.',
  outline: 'A timeline of titled sections.',
  prompt: 'Answers a prompt about the media, as text or JSON following `schema`.',
  workflow: 'Runs steps (each a task kind with its options, and `next` steps on its output) on the input.',
  conditions: 'Runs `next` steps only when every condition on the media holds.',
  http: 'Calls `url` with the task, media and file as JSON.',
  adaptive_video: 'An HLS and DASH package (a ladder of renditions over shared CMAF segments) for adaptive streaming.',
};

/** One example body per kind: each is sent to POST /tasks by test/api/openapi-bodies.test.ts. */
export const TASK_EXAMPLES: Record<string, Json> = {
  ingest: { kind: 'ingest', url: 'https://media.example.com/talk.mp4', metadata: { source: 'import' } },
  video: { kind: 'video', file_id: EXAMPLE_FILE_ID, format: 'webm', height: 720 },
  image: { kind: 'image', file_id: EXAMPLE_FILE_ID, width: 640, format: 'webp' },
  audio: { kind: 'audio', file_id: EXAMPLE_FILE_ID, format: 'mp3', bitrate: 128000 },
  chapters: { kind: 'chapters', file_id: EXAMPLE_FILE_ID, format: 'vtt', min_length: 30 },
  subtitles: { kind: 'subtitles', file_id: EXAMPLE_FILE_ID, format: 'vtt', language: 'en' },
  thumbnails: { kind: 'thumbnails', file_id: EXAMPLE_FILE_ID, count: 20, width: 160, format: 'webp' },
  nsfw: { kind: 'nsfw', file_id: EXAMPLE_FILE_ID, threshold: 0.5 },
  speech: { kind: 'speech', file_id: EXAMPLE_FILE_ID, language: 'en' },
  description: { kind: 'description', file_id: EXAMPLE_FILE_ID },
  outline: { kind: 'outline', file_id: EXAMPLE_FILE_ID },
  prompt: { kind: 'prompt', file_id: EXAMPLE_FILE_ID, prompt: 'Is a person on screen? Answer yes or no.' },
  workflow: {
    kind: 'workflow',
    file_id: EXAMPLE_FILE_ID,
    workflow: [
      { kind: 'image', width: 640, format: 'webp', ref: 'poster' },
      { kind: 'thumbnails', count: 20 },
    ],
  },
  conditions: {
    kind: 'conditions',
    file_id: EXAMPLE_FILE_ID,
    conditions: [{ prop: 'kind', value: 'video' }],
  },
  http: { kind: 'http', url: 'https://hooks.example.com/mediad', method: 'POST' },
  adaptive_video: { kind: 'adaptive_video', file_id: EXAMPLE_FILE_ID, segment_seconds: 4 },
};

const schemaName = (kind: string) => `${kind[0]!.toUpperCase()}${kind.slice(1)}TaskBody`;

/**
 * Replaces POST /tasks' request body in `doc` by a oneOf of one schema per kind, discriminated by
 * `kind`; `shared` is the route's own schema of the fields every task takes.
 */
export function documentTaskBodies(doc: Json): void {
  const paths = doc.paths as Record<string, Record<string, Json>> | undefined;
  const media = (paths?.['/tasks']?.post?.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
  const json = media?.['application/json'];
  if (!json) return;
  const shared = ((json.schema as Json).properties ?? {}) as Record<string, Json>;
  const components = ((doc.components as Json).schemas ??= {}) as Record<string, Json>;
  const mapping: Record<string, string> = {};
  for (const kind of TASK_KINDS) {
    const config = kindConfig(kindOf(kind));
    // The input: a file of the project or a url fetched first, a url only, or none (http's url is its option).
    const input: Record<string, Json> =
      config.input === 'file'
        ? { file_id: shared.file_id!, url: shared.url! }
        : config.input === 'url'
          ? { url: shared.url! }
          : {};
    const required = [
      'kind',
      ...(config.input === 'url' ? ['url'] : []),
      ...config.required.filter((r) => r !== 'kind'),
    ];
    const inputNote =
      config.input === 'file'
        ? ' Its input is `file_id` (a file of this project) or `url` (fetched into a new media first): exactly one.'
        : config.input === 'url'
          ? ''
          : ' It takes no input file.';
    components[schemaName(kind)] = {
      type: 'object',
      title: kind,
      description: `${SUMMARY[kind] ?? ''}${inputNote}`.trim(),
      properties: {
        kind: { type: 'string', const: kind },
        ...input,
        ...config.options,
        filename: shared.filename!,
        folder: shared.folder!,
        ref: shared.ref!,
        webhook_url: shared.webhook_url!,
      },
      required: [...new Set(required)],
      additionalProperties: false,
      example: TASK_EXAMPLES[kind],
    };
    mapping[kind] = `#/components/schemas/${schemaName(kind)}`;
  }
  json.schema = {
    oneOf: Object.values(mapping).map(($ref) => ({ $ref })),
    discriminator: { propertyName: 'kind', mapping },
  };
  json.examples = Object.fromEntries(
    Object.keys(mapping).map((kind) => [kind, { summary: SUMMARY[kind], value: TASK_EXAMPLES[kind] }]),
  );
}
