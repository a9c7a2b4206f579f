/** SPEC 4.7: the closed catalogue of task kinds. */
export const TASK_KINDS = [
  'ingest',
  'video',
  'image',
  'audio',
  'chapters',
  'subtitles',
  'thumbnails',
  'nsfw',
  'speech',
  'description',
  'outline',
  'prompt',
  'workflow',
  'conditions',
  'http',
  // adaptive streaming
  'adaptive_video',
] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

export function isTaskKind(kind: string): kind is TaskKind {
  return (TASK_KINDS as readonly string[]).includes(kind);
}
