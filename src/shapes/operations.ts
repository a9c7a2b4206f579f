import type { TasksTable, WorkersTable } from '../db/schema.js';

// Operations as the API shows them: the worker pools alive and the tasks they run.

/** A task a worker runs now, shown only when it belongs to the caller's organisation. */
export interface RunningTask {
  id: string;
  kind: string;
  project_id: string;
}

export function toWorkerObject(row: WorkersTable, tasks: RunningTask[]) {
  return {
    id: row.id,
    object: 'worker' as const,
    host: row.host,
    pid: row.pid,
    concurrency: row.concurrency,
    started: row.started,
    last_heartbeat: row.heartbeat,
    current_task_id: tasks[0]?.id ?? null,
    current_tasks: tasks,
  };
}
export type WorkerObject = ReturnType<typeof toWorkerObject>;

type RunColumns = Pick<
  TasksTable,
  'id' | 'kind' | 'status' | 'error' | 'created' | 'started' | 'finished' | 'input_file_id' | 'output_file_id'
>;

/** A task of an automation run (the workflow task or one of its steps): ids, status, timings, error. */
function runTask(row: RunColumns) {
  const failure =
    row.error && row.status === 'failed' ? (JSON.parse(row.error) as { code: string; message: string }) : undefined;
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    created: row.created,
    started: row.started ?? undefined,
    finished: row.finished ?? undefined,
    duration_ms:
      row.started && row.finished ? Math.max(0, Date.parse(row.finished) - Date.parse(row.started)) : undefined,
    error: failure?.message,
    error_code: failure?.code,
    input_file_id: row.input_file_id ?? undefined,
    output_file_id: row.output_file_id ?? undefined,
  };
}
export type RunTaskObject = ReturnType<typeof runTask>;

/** One run of an automation: the workflow task it started (and the event that started it), with its steps' tasks. */
export function toAutomationRunObject(workflow: RunColumns, eventId: string | null, steps: RunColumns[]) {
  return {
    ...runTask(workflow),
    object: 'automation_run' as const,
    event_id: eventId ?? undefined,
    steps: steps.map(runTask),
  };
}
export type AutomationRunObject = ReturnType<typeof toAutomationRunObject>;
