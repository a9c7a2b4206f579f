import type { TasksTable } from '../db/schema.js';
import type { FileObject } from './files.js';
import { SEALED_PREFIX } from '../secrets/sealer.js';
import { redactSealed } from '../secrets/secret-options.js';

/** Stored JSON as answers show it: secret values (sealed) read REDACTED. */
export function parseRedacted<T>(json: string): T {
  const value = JSON.parse(json) as T;
  return json.includes(SEALED_PREFIX) ? redactSealed(value) : value;
}

/** Where a task's output goes: the `folder`, `filename` and `ref` it was created with. */
export interface TaskTarget {
  folder?: string;
  filename?: string;
  ref?: string;
}

/** SPEC 2.4 input/output: a compact file summary. */
export function fileSummary(f: FileObject) {
  return {
    id: f.id,
    object: f.object,
    kind: f.kind,
    type: f.type,
    width: f.width,
    height: f.height,
    duration: f.duration,
    filesize: f.filesize,
    url: f.url,
    ref: f.ref,
    media_id: f.media_id,
  };
}
export type FileSummary = ReturnType<typeof fileSummary>;

export function toTaskObject(row: TasksTable) {
  const failure =
    row.error && row.status === 'failed' ? (JSON.parse(row.error) as { code: string; message: string }) : undefined;
  return {
    id: row.id,
    object: 'task' as const,
    kind: row.kind,
    input: row.input
      ? (JSON.parse(row.input) as Record<string, unknown>)
      : row.input_url
        ? { url: row.input_url }
        : undefined,
    options: parseRedacted<Record<string, unknown>>(row.options),
    output: row.output ? (JSON.parse(row.output) as Record<string, unknown>) : null,
    status: row.status,
    progress: row.progress,
    // What the SDKs type `error` as: the human message; the stable code beside it.
    error: failure?.message,
    error_code: failure?.code,
    attempts: row.attempts,
    parent_id: row.parent_id ?? undefined,
    automation_id: row.automation_id ?? undefined,
    retry_of: row.retry_of ?? undefined,
    results: row.results ? (JSON.parse(row.results) as Record<string, unknown>) : undefined,
    // adaptive_video: when its package first became playable while the task still ran.
    playable_at: row.playable_at ?? undefined,
    webhook_url: row.webhook_url ?? undefined,
    created: row.created,
    updated: row.updated,
    started: row.started ?? undefined,
    finished: row.finished ?? undefined,
  };
}
export type TaskObject = ReturnType<typeof toTaskObject>;

/** A workflow's steps as GET /tasks/{id} lists them. */
export interface WorkflowChildSummary {
  id: string;
  object: 'task';
  kind: string;
  status: string;
  output_file_id: string | null;
}
